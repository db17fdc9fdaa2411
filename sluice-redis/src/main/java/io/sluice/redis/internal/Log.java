package io.sluice.redis.internal;

import java.lang.System.Logger.Level;

/**
 * The Redis store's logger: the JDK's platform logging ({@link System.Logger}), with SLF4J-style {@code {}}
 * placeholders and a trailing {@link Throwable} taken as the cause.
 *
 * <p>Why not SLF4J: a library that calls SLF4J makes every application without an SLF4J provider print SLF4J's
 * "no providers" warning at start-up (Netty's logger probe, which Lettuce runs, triggers it too once slf4j-api is
 * on the class path). {@code System.Logger} needs no dependency; it writes through java.util.logging by default,
 * and an application that routes logging through SLF4J gets these lines too by adding
 * {@code org.slf4j:slf4j-jdk-platform-logging}. Thread-safe; formatting happens only for enabled levels.
 */
final class Log {

    private final System.Logger logger;

    private Log(System.Logger logger) {
        this.logger = logger;
    }

    static Log get(Class<?> owner) {
        return new Log(System.getLogger(owner.getName()));
    }

    void debug(String pattern, Object... args) {
        log(Level.DEBUG, pattern, args);
    }

    void info(String pattern, Object... args) {
        log(Level.INFO, pattern, args);
    }

    void warn(String pattern, Object... args) {
        log(Level.WARNING, pattern, args);
    }

    void error(String pattern, Object... args) {
        log(Level.ERROR, pattern, args);
    }

    private void log(Level level, String pattern, Object[] args) {
        if (!logger.isLoggable(level)) {
            return;
        }
        Throwable cause = null;
        int count = args.length;
        if (count > 0 && args[count - 1] instanceof Throwable t && placeholders(pattern) < count) {
            cause = t;
            count--;
        }
        String message = format(pattern, args, count);
        if (cause == null) {
            logger.log(level, message);
        } else {
            logger.log(level, message, cause);
        }
    }

    /** {@code pattern} with each {@code {}} replaced by the next of the first {@code count} arguments. */
    static String format(String pattern, Object[] args, int count) {
        StringBuilder out = new StringBuilder(pattern.length() + 16 * count);
        int next = 0;
        int from = 0;
        for (int at = pattern.indexOf("{}"); at >= 0 && next < count; at = pattern.indexOf("{}", from)) {
            out.append(pattern, from, at).append(args[next++]);
            from = at + 2;
        }
        return out.append(pattern, from, pattern.length()).toString();
    }

    private static int placeholders(String pattern) {
        int n = 0;
        for (int at = pattern.indexOf("{}"); at >= 0; at = pattern.indexOf("{}", at + 2)) {
            n++;
        }
        return n;
    }
}
