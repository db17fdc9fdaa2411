package io.sluice;

import java.time.Duration;

/** Argument validation shared by the value classes: each failure names the field and the accepted range. */
final class Checks {
    /** Longest key accepted by the stores, in UTF-16 chars. */
    static final int MAX_KEY_LENGTH = 512;
    private static final long MAX_DURATION_MICROS = Limit.MAX_DURATION.toNanos() / 1_000;

    private Checks() {}

    static long count(long value, String field) {
        return count(value, field, 1, Limit.MAX_COUNT);
    }

    static long count(long value, String field, long min, long max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(field + " must be in [" + min + ", " + max + "], was " + value);
        }
        return value;
    }

    static long micros(Duration value, String field) {
        return micros(value, field, 1);
    }

    /** Converts a duration to whole microseconds in [minMicros, MAX_DURATION]. */
    static long micros(Duration value, String field, long minMicros) {
        if (value == null) {
            throw new IllegalArgumentException(field + " must not be null");
        }
        if (value.isNegative() || value.compareTo(Limit.MAX_DURATION) > 0) {
            throw new IllegalArgumentException(field + " must be in [" + minMicros + "us, " + Limit.MAX_DURATION
                    + "], was " + value);
        }
        if (value.getNano() % 1_000 != 0) {
            throw new IllegalArgumentException(field + " must be a whole number of microseconds, was " + value);
        }
        long micros = value.toNanos() / 1_000;
        if (micros < minMicros || micros > MAX_DURATION_MICROS) {
            throw new IllegalArgumentException(field + " must be in [" + minMicros + "us, " + Limit.MAX_DURATION
                    + "], was " + value);
        }
        return micros;
    }

    static double finite(double value, String field, double minExclusive, double max) {
        if (Double.isNaN(value) || Double.isInfinite(value) || value <= minExclusive || value > max) {
            throw new IllegalArgumentException(field + " must be a finite number in (" + minExclusive + ", " + max
                    + "], was " + value);
        }
        return value;
    }

    /** Slowest rate accepted: one permit per 366 days, so every interval fits the supported durations. */
    static final double MIN_RATE = 1.0 / 31_622_400;

    static double rate(double value, String field) {
        if (Double.isNaN(value) || Double.isInfinite(value) || value < MIN_RATE || value > 1_000_000.0) {
            throw new IllegalArgumentException(field + " must be a finite number in [" + MIN_RATE
                    + " (one per 366 days), 1000000.0], was " + value);
        }
        return value;
    }

    static String name(String name, String field) {
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException(field + " must be a non-empty string");
        }
        if (name.length() > 128) {
            throw new IllegalArgumentException(field + " must be at most 128 characters, was " + name.length());
        }
        wellFormed(name, field);
        return name;
    }

    static String key(String key) {
        if (key == null || key.isEmpty()) {
            throw new IllegalArgumentException("key must be a non-empty string");
        }
        if (key.length() > MAX_KEY_LENGTH) {
            throw new IllegalArgumentException("key must be at most " + MAX_KEY_LENGTH + " characters, was "
                    + key.length());
        }
        wellFormed(key, "key");
        return key;
    }

    /** Names and keys become bytes in the stores; see {@link Text} for why ill-formed text is refused. */
    static String wellFormed(String text, String field) {
        String problem = Text.problem(text);
        if (problem != null) {
            throw new IllegalArgumentException(field + " " + problem);
        }
        return text;
    }

    static <T> T notNull(T value, String field) {
        if (value == null) {
            throw new IllegalArgumentException(field + " must not be null");
        }
        return value;
    }
}
