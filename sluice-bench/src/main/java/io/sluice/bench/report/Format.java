package io.sluice.bench.report;

import java.util.Locale;

/** Number formats of the report: fixed, locale-independent, "—" for missing values. */
final class Format {
    private Format() {}

    static final String NONE = "—";

    static String count(Double v) {
        return v == null ? NONE : String.format(Locale.ROOT, "%,.0f", v);
    }

    static String count(Long v) {
        return v == null ? NONE : String.format(Locale.ROOT, "%,d", v);
    }

    static String decimal(Double v, int places) {
        return v == null ? NONE : String.format(Locale.ROOT, "%." + places + "f", v);
    }

    static String percent(Double v) {
        if (v == null) {
            return NONE;
        }
        // Small shares keep a decimal: "mostly rejected" rows live between 0% and 10%.
        return String.format(Locale.ROOT, v < 0.1 && v > 0 ? "%.1f%%" : "%.0f%%", v * 100);
    }

    static String ratio(Double v) {
        return v == null || v.isNaN() || v.isInfinite() ? NONE : String.format(Locale.ROOT, "%.2f×", v);
    }

    static String plusMinus(Double v, Double error) {
        if (v == null) {
            return NONE;
        }
        return error == null ? decimal(v, 1) : decimal(v, 1) + " ± " + decimal(error, 1);
    }

    static String gibibytes(long bytes) {
        return String.format(Locale.ROOT, "%.1f GiB", bytes / (double) (1L << 30));
    }

    /** Escapes a table cell. */
    static String cell(String text) {
        return text == null ? NONE : text.replace("|", "\\|");
    }
}
