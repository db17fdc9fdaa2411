package io.sluice.rules;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Durations as rule files write them: a non-negative decimal number and a unit, {@code us}, {@code ms},
 * {@code s}, {@code m}, {@code h} or {@code d}, e.g. {@code "250ms"}, {@code "0.5s"}, {@code "1m"}. The value
 * must come out as a whole number of microseconds (the resolution of every algorithm), so {@code "0.5us"} is
 * refused rather than rounded.
 */
public final class Durations {

    private static final Pattern TEXT = Pattern.compile("([0-9]+(?:\\.[0-9]+)?)(us|ms|s|m|h|d)");
    /** Far above any valid limit parameter (366 days), far below overflow: keeps the arithmetic in longs. */
    private static final long LARGEST_MICROS = 1L << 60;

    /** What {@link #parse} accepts, for error messages. */
    public static final String EXPECTED = "a duration: a number and a unit (us, ms, s, m, h, d), e.g. \"1m\" or \"0.5s\"";

    private Durations() {}

    /**
     * The duration {@code text} denotes.
     *
     * @throws IllegalArgumentException saying what was expected, when {@code text} is not a duration or not a
     *                                  whole number of microseconds
     */
    public static Duration parse(String text) {
        Matcher m = TEXT.matcher(text);
        if (!m.matches()) {
            throw new IllegalArgumentException("expected " + EXPECTED + "; was \"" + text + "\"");
        }
        BigDecimal micros = new BigDecimal(m.group(1)).multiply(BigDecimal.valueOf(unitMicros(m.group(2))));
        if (micros.compareTo(BigDecimal.valueOf(LARGEST_MICROS)) > 0) {
            throw new IllegalArgumentException("expected a duration of at most 366d; was \"" + text + "\"");
        }
        if (micros.stripTrailingZeros().scale() > 0) {
            throw new IllegalArgumentException("expected a whole number of microseconds; \"" + text + "\" is "
                    + micros.stripTrailingZeros().toPlainString() + "us");
        }
        return Duration.ofNanos(micros.longValueExact() * 1_000);
    }

    /**
     * The shortest text {@link #parse} reads back as {@code d}: the largest unit that divides it exactly, e.g.
     * {@code 90 s} is {@code "90s"}, {@code 2 min} is {@code "2m"}, {@code 1.5 ms} is {@code "1500us"}.
     *
     * @throws IllegalArgumentException when {@code d} is negative or not a whole number of microseconds
     */
    public static String format(Duration d) {
        if (d.isNegative() || d.getNano() % 1_000 != 0) {
            throw new IllegalArgumentException("duration must be a non-negative whole number of microseconds, was " + d);
        }
        long micros = d.toNanos() / 1_000;
        if (micros == 0) {
            return "0s";
        }
        for (String unit : new String[] {"d", "h", "m", "s", "ms"}) {
            long per = unitMicros(unit);
            if (micros % per == 0) {
                return micros / per + unit;
            }
        }
        return micros + "us";
    }

    private static long unitMicros(String unit) {
        switch (unit) {
            case "us":
                return 1;
            case "ms":
                return 1_000;
            case "s":
                return 1_000_000;
            case "m":
                return 60_000_000;
            case "h":
                return 3_600_000_000L;
            case "d":
                return 86_400_000_000L;
            default:
                throw new IllegalArgumentException("unit must be one of us, ms, s, m, h, d, was " + unit);
        }
    }
}
