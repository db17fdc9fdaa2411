package io.sluice.rules;

import java.math.BigDecimal;

/**
 * The one number format for times and durations in Sluice's JSON (replay output, the server's API):
 * milliseconds with up to three decimals and no trailing zeros ({@code 1500}, {@code 1500.25}, {@code 0.001}).
 * Every store decides in whole microseconds, so this is exact, and the same decisions print byte for byte the
 * same whatever the store.
 */
public final class Millis {

    private Millis() {}

    /** Appends {@code micros} (non-negative) as milliseconds. */
    public static StringBuilder append(StringBuilder s, long micros) {
        s.append(micros / 1_000);
        int fraction = (int) (micros % 1_000);
        if (fraction != 0) {
            s.append('.');
            if (fraction < 100) {
                s.append('0');
            }
            if (fraction < 10) {
                s.append('0');
            }
            while (fraction % 10 == 0) {
                fraction /= 10;
            }
            s.append(fraction);
        }
        return s;
    }

    public static String format(long micros) {
        return append(new StringBuilder(24), micros).toString();
    }

    /**
     * Whole microseconds from a decimal number of milliseconds, e.g. {@code "1.5"} is 1500.
     *
     * @throws IllegalArgumentException unless the number is a whole number of microseconds in [0, max]
     */
    public static long parseMicros(String decimalMillis, long maxMicros) {
        long plain = plainMicros(decimalMillis);
        if (plain >= 0 && plain <= maxMicros) {
            return plain;
        }
        BigDecimal micros;
        try {
            micros = new BigDecimal(decimalMillis).movePointRight(3).stripTrailingZeros();
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("expected a number of milliseconds; was " + decimalMillis);
        }
        if (micros.scale() > 0) {
            throw new IllegalArgumentException("expected milliseconds with at most 3 decimals (whole microseconds);"
                    + " was " + decimalMillis);
        }
        if (micros.signum() < 0 || micros.compareTo(BigDecimal.valueOf(maxMicros)) > 0) {
            throw new IllegalArgumentException("expected milliseconds in [0, " + format(maxMicros) + "]; was "
                    + decimalMillis);
        }
        return micros.longValueExact();
    }

    /**
     * The common case without BigDecimal: up to 13 digits, a point and 1 to 3 decimals ({@code 1767225600000.25});
     * -1 for anything else, which {@link #parseMicros} then reads exactly the slow way.
     */
    private static long plainMicros(String s) {
        int point = s.indexOf('.');
        int decimals = s.length() - point - 1;
        if (point < 1 || point > 13 || decimals < 1 || decimals > 3) {
            return -1;
        }
        long value = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (i == point) {
                continue;
            }
            if (c < '0' || c > '9') {
                return -1;
            }
            value = value * 10 + (c - '0');
        }
        for (int d = decimals; d < 3; d++) {
            value *= 10;
        }
        return value;
    }
}
