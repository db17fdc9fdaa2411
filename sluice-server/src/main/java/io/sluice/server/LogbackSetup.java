package io.sluice.server;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.encoder.Encoder;
import java.util.List;
import net.logstash.logback.composite.loggingevent.KeyValuePairsJsonProvider;
import net.logstash.logback.composite.loggingevent.LogLevelJsonProvider;
import net.logstash.logback.composite.loggingevent.LoggerNameJsonProvider;
import net.logstash.logback.composite.loggingevent.LoggingEventFormattedTimestampJsonProvider;
import net.logstash.logback.composite.loggingevent.LoggingEventJsonProviders;
import net.logstash.logback.composite.loggingevent.MessageJsonProvider;
import net.logstash.logback.composite.loggingevent.StackTraceJsonProvider;
import net.logstash.logback.encoder.LoggingEventCompositeJsonEncoder;
import org.slf4j.LoggerFactory;

/**
 * Logback configured in code for {@link ServerLogging}: one console appender on standard error, writing a text
 * line or one JSON object per event. Replaces whatever configuration Logback started with, so a server logs the
 * same way whichever {@code logback.xml} is on the class path.
 */
final class LogbackSetup {

    /** Libraries that would otherwise report their routine start-up (Armeria's flags, Netty's transports). */
    private static final List<String> QUIET_LIBRARIES = List.of("com.linecorp.armeria", "io.netty", "io.grpc",
            "io.micrometer", "io.lettuce");

    private LogbackSetup() {}

    static void apply(boolean text, String level) {
        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        context.reset();
        ConsoleAppender<ILoggingEvent> console = new ConsoleAppender<>();
        console.setContext(context);
        console.setName("stderr");
        console.setTarget("System.err");
        console.setEncoder(text ? textEncoder(context) : jsonEncoder(context));
        console.start();
        Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
        root.addAppender(console);
        Level chosen = Level.toLevel(level, Level.INFO);
        root.setLevel(chosen);
        // The libraries say only warnings and errors, unless an even higher level was chosen for everything.
        Level libraries = chosen.isGreaterOrEqual(Level.WARN) ? chosen : Level.WARN;
        for (String name : QUIET_LIBRARIES) {
            context.getLogger(name).setLevel(libraries);
        }
        // When Redis cannot be reached, closing the store's client can race Lettuce's handshake-failure listener,
        // and Netty logs the listener it could not run with a stack trace. The command has already said that the
        // store is unavailable (exit status 3); the trace says nothing more.
        context.getLogger("io.netty.util.concurrent.DefaultPromise.rejectedExecution").setLevel(Level.OFF);
    }

    /** {@code 2026-11-25T22:00:00.000Z INFO  SluiceServer - listening event="server_started" http="..."}. */
    private static Encoder<ILoggingEvent> textEncoder(LoggerContext context) {
        PatternLayoutEncoder encoder = new PatternLayoutEncoder();
        encoder.setContext(context);
        encoder.setPattern("%d{yyyy-MM-dd'T'HH:mm:ss.SSSXXX} %-5level %logger{0} - %msg %kvp%n");
        encoder.start();
        return encoder;
    }

    /**
     * One JSON object per line: {@code time} (ISO 8601), {@code level}, {@code logger}, {@code message}, each of the
     * event's key-value pairs as a field of its own, and {@code stack_trace} when an unexpected error has one.
     */
    private static Encoder<ILoggingEvent> jsonEncoder(LoggerContext context) {
        LoggingEventJsonProviders providers = new LoggingEventJsonProviders();
        LoggingEventFormattedTimestampJsonProvider time = new LoggingEventFormattedTimestampJsonProvider();
        time.setFieldName("time");
        time.setTimeZone("UTC");
        providers.addTimestamp(time);
        LogLevelJsonProvider levelField = new LogLevelJsonProvider();
        levelField.setFieldName("level");
        providers.addLogLevel(levelField);
        LoggerNameJsonProvider logger = new LoggerNameJsonProvider();
        logger.setFieldName("logger");
        providers.addLoggerName(logger);
        MessageJsonProvider message = new MessageJsonProvider();
        message.setFieldName("message");
        providers.addMessage(message);
        providers.addKeyValuePairs(new KeyValuePairsJsonProvider());
        StackTraceJsonProvider stack = new StackTraceJsonProvider();
        stack.setFieldName("stack_trace");
        providers.addStackTrace(stack);
        LoggingEventCompositeJsonEncoder encoder = new LoggingEventCompositeJsonEncoder();
        encoder.setContext(context);
        encoder.setProviders(providers);
        encoder.start();
        return encoder;
    }
}
