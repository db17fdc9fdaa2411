package io.sluice.server;

import java.util.List;
import java.util.Locale;
import org.slf4j.LoggerFactory;

/**
 * How {@code sluice serve} logs: {@code --log-format text|json} and {@code --log-level LEVEL}, applied once at
 * start to the SLF4J back-end when it is Logback (the launcher's). Every line goes to standard error; the
 * banner stays on standard output.
 *
 * <p>Another back-end (an application or test that puts slf4j-simple on the class path and starts
 * {@link ServeCommand} itself) is left as it is configured; asking it for JSON or a level is then an error rather
 * than a request silently ignored.
 */
final class ServerLogging {

    /** The formats {@code --log-format} takes. */
    static final List<String> FORMATS = List.of("text", "json");
    /** The levels {@code --log-level} takes, from the most to the least said. */
    static final List<String> LEVELS = List.of("trace", "debug", "info", "warn", "error", "off");

    private ServerLogging() {}

    /**
     * Applies the format and level; null means the default (text, info).
     *
     * @throws ServeCommand.ConfigException when a format or level was asked for and the back-end is not Logback
     */
    static void apply(String format, String level) throws ServeCommand.ConfigException {
        String backend = LoggerFactory.getILoggerFactory().getClass().getName();
        if (!backend.equals("ch.qos.logback.classic.LoggerContext")) {
            if (format != null || level != null) {
                throw new ServeCommand.ConfigException("--log-format and --log-level need Logback as the SLF4J"
                        + " back-end (the sluice launcher's); this class path has " + backend);
            }
            return;
        }
        // Only now touch Logback's classes: without Logback on the class path they would not load.
        LogbackSetup.apply(format == null || format.equals("text"), level == null ? "info" : level);
    }

    /** The level names, case-insensitively; null for another word. */
    static String level(String text) {
        String lower = text.strip().toLowerCase(Locale.ROOT);
        return LEVELS.contains(lower) ? lower : null;
    }
}
