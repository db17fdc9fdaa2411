package io.sluice.bench.report;

import io.sluice.bench.BenchResults;
import io.sluice.bench.Measurement;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Collectors;

/**
 * One part of docs/benchmarks.md, written into the page that {@link MarkdownReport} assembles: the run's results,
 * its rows, the Markdown written so far, and what every section shares (row orders, the Sluice-over-peer ratio
 * columns).
 */
abstract class ReportSection {

    static final List<String> LOCAL_ORDER = List.of("sluice", "guava", "bucket4j", "resilience4j");
    static final List<String> REDIS_ORDER = List.of("sluice", "bucket4j", "bucket4j-batch", "redisson",
            "bare-lua");
    static final List<String> ALGORITHM_ORDER = List.of("token_bucket", "gcra", "fixed_window",
            "sliding_window", "smooth_bursty", "sliding_log", "rolling_window", "leaky_bucket", "smooth_warming_up",
            "refresh_period", "concurrency");

    final BenchResults results;
    final Rows rows;
    private final StringBuilder md;

    ReportSection(BenchResults results, Rows rows, StringBuilder md) {
        this.results = results;
        this.rows = rows;
        this.md = md;
    }

    /** A section of the same page. */
    ReportSection(ReportSection page) {
        this(page.results, page.rows, page.md);
    }

    /** The page written so far. */
    String markdown() {
        return md.toString();
    }

    /**
     * The Sluice algorithms peers are compared with: token_bucket and gcra (the targets' algorithms) when they
     * were measured, else the first two Sluice algorithms that were (e.g. while Redis runs fixed_window only).
     */
    static List<String> references(List<Measurement> suiteRows) {
        List<String> measured = ALGORITHM_ORDER.stream().filter(a -> suiteRows.stream()
                .anyMatch(m -> "sluice".equals(m.system()) && a.equals(m.algorithm()) && m.measured())).toList();
        List<String> preferred = measured.stream().filter(a -> a.equals("token_bucket") || a.equals("gcra")).toList();
        return preferred.isEmpty() ? measured.stream().limit(2).toList() : preferred;
    }

    static String ratioHeaders(List<String> references) {
        return references.stream().map(a -> " | Sluice " + a + " ÷ this").collect(Collectors.joining());
    }

    String ratioCells(Measurement m, List<String> references) {
        return references.stream().map(a -> " | " + ratioBeside(m, a)).collect(Collectors.joining());
    }

    /** Sluice's {@code algorithm} in the same place over this row, in decisions per second. */
    String ratioBeside(Measurement m, String algorithm) {
        if ("sluice".equals(m.system()) || m.decisionsPerS() == null) {
            return Format.NONE;
        }
        return rows.sluiceBeside(m, algorithm).map(s -> Format.ratio(s.decisionsPerS() / m.decisionsPerS()))
                .orElse(Format.NONE);
    }

    static Comparator<Measurement> localOrder() {
        return Comparator.comparing((Measurement m) -> m.keys())
                .thenComparing(Measurement::threads)
                .thenComparing(m -> LOCAL_ORDER.indexOf(m.system()))
                .thenComparing(m -> ALGORITHM_ORDER.indexOf(m.algorithm()));
    }

    static Comparator<Measurement> redisOrder() {
        return Comparator.comparing((Measurement m) -> List.of("sync", "async", "redis-benchmark", "one_request_per_key")
                        .indexOf(m.mode()))
                .thenComparing(m -> m.inFlight() == null ? 0 : m.inFlight())
                .thenComparing(m -> REDIS_ORDER.indexOf(m.system()))
                .thenComparing(m -> ALGORITHM_ORDER.indexOf(m.algorithm()));
    }

    void line(String text) {
        md.append(text).append('\n');
    }

    void line() {
        md.append('\n');
    }
}
