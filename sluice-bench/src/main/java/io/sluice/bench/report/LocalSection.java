package io.sluice.bench.report;

import io.sluice.bench.Measurement;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import org.jfree.data.category.DefaultCategoryDataset;

/** The in-process section of docs/benchmarks.md: Sluice and its peers in one JVM, by mode, with charts. */
final class LocalSection extends ReportSection {

    LocalSection(ReportSection page) {
        super(page);
    }

    void write(Path chartDir) throws IOException {
        List<Measurement> local = rows.where(m -> "local".equals(m.suite()) && m.measured());
        if (local.isEmpty()) {
            return;
        }
        line("## Local: one permit, in memory (JMH)");
        line();
        line("`tryAcquire` of one permit on one key or 10,000 keys, by 1 and 2 threads; with 10,000 keys each thread "
                + "has its own share of the keys. Every peer keeps one limiter per key in a `ConcurrentHashMap`, as an "
                + "application would; Sluice's in-memory store does the same lookup. *Always granted*: 10^12 per "
                + "second, nothing is rejected (Sluice's smooth_bursty accepts at most 10^6 per second, so with one key "
                + "it mostly rejects even here — see *admitted*). *Mostly rejected*: 10 per second per key. *ns per "
                + "call*: JMH average time per call per thread, the median of the measured iterations, ± JMH's 99.9% "
                + "confidence half-width; decisions/s is all threads together; *bytes allocated per call* is JMH's GC "
                + "profiler (`gc.alloc.rate.norm`), a cost the machine's background load does not blur. Source: `sluice-bench/src/main/java/io/sluice/bench/local/`.");
        line();
        for (String mode : List.of("always_granted", "mostly_rejected")) {
            List<Measurement> modeRows = local.stream().filter(m -> mode.equals(m.mode())).sorted(localOrder()).toList();
            if (modeRows.isEmpty()) {
                continue;
            }
            String chart = "local-" + mode.replace('_', '-') + ".png";
            localChart(chartDir.resolve(chart), mode, modeRows);
            line("### " + (mode.equals("always_granted") ? "Always granted" : "Mostly rejected"));
            line();
            line("![decisions per second, " + mode.replace('_', ' ') + "](bench/" + chart + ")");
            line();
            List<String> references = references(local);
            line("| keys | threads | system | algorithm | ns per call | decisions/s | bytes allocated per call | admitted"
                    + ratioHeaders(references) + " |");
            line("| ---: | ---: | --- | --- | ---: | ---: | ---: | ---:" + " | ---:".repeat(references.size()) + " |");
            for (Measurement m : modeRows) {
                line("| " + String.format(Locale.ROOT, "%,d", m.keys()) + " | " + m.threads() + " | " + m.system() + " | "
                        + m.algorithm() + " | " + Format.plusMinus(m.nsPerOp(), m.nsPerOpError()) + " | "
                        + Format.count(m.decisionsPerS()) + " | " + Format.decimal(m.allocBytesPerOp(), 0) + " | "
                        + Format.percent(m.admittedFraction()) + ratioCells(m, references) + " |");
            }
            line();
        }
        inProcessBeforeAfter();
    }

    /**
     * A record, not a measurement of this run: what issue 13's in-process change did, measured beside the code
     * before it. It stays until a full run on a quiet machine has the time ratios the record could not give.
     */
    private void inProcessBeforeAfter() {
        line("### In-process path: before and after");
        line();
        line("Issue 13's in-process target: one thread on one key at least as fast as Bucket4j's lock-free bucket and "
                + "Guava, allocating at most 64 bytes per decision. The change (2026-11-26): a rule of one token_bucket, "
                + "gcra, fixed_window or sliding_window limit is stepped in place on a cell per key (under the cell's "
                + "monitor), so a decision allocates no new state and no new entry (`InPlaceStep`; one "
                + "`*InPlacePropertiesTest` per algorithm holds it to the pure transition, `InPlaceContentionTest` "
                + "counts permits while threads race it), and a `Decision` takes 56 bytes instead of 88 (its rare "
                + "fields kept apart). Bytes allocated per `tryAcquire` (JMH `-prof gc`, 1 key, 1 thread; granted / "
                + "rejected, that is the always granted and mostly rejected rows):");
        line();
        line("| code | token_bucket | gcra | fixed_window | sliding_window | smooth_bursty | Bucket4j | Guava |");
        line("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
        line("| before, full run of 2026-11-22 | 146 / 176 | 128 / 136 | 136 / 168 | 144 / 136 | 139 / 136 | 64 / 64 "
                + "| 0 / 0 |");
        line("| before, 2026-11-26 session | 163 / 192 | 144 / 152 | — | — | — | 64 / 64 | 0 / 0 |");
        line("| after, 2026-11-26, second session | 56 / 56 | 56 / 56 | 56 / 56 | 56 / 56 | 193 / 120 | 64 / 64 "
                + "| 0 / 0 |");
        line();
        line("smooth_bursty (a double of stored permits and a next-free time, shared with smooth_warming_up) still "
                + "allocates its state and entry per change; it was left for a later step. The last row was measured "
                + "with 2 warm-up and 3 measured iterations of 1 s at a load average of 30 to 40 from other builds: "
                + "its time per call (Guava 660 to 970 ns, Bucket4j 2,300 to 3,500 ns, Sluice 2,800 to 68,000 ns, "
                + "each ± more than itself) means nothing, and no time ratio can be read from either session. "
                + "Allocation per call does not depend on the load. The time ratios in the tables above and in the "
                + "targets are this run's.");
        line();
    }

    private void localChart(Path file, String mode, List<Measurement> modeRows) throws IOException {
        DefaultCategoryDataset data = new DefaultCategoryDataset();
        for (Measurement m : modeRows) {
            String series = m.system().equals("sluice") ? "sluice " + m.algorithm() : m.system();
            String category = String.format(Locale.ROOT, "%,d %s, %d %s", m.keys(), m.keys() == 1 ? "key" : "keys",
                    m.threads(), m.threads() == 1 ? "thread" : "threads");
            data.addValue(m.decisionsPerS() / 1e6, series, category);
        }
        Charts.bars(file, "In memory, " + mode.replace('_', ' ') + ": million decisions per second (higher is better)",
                null, "million decisions/s", data, true, 1100, 520);
    }
}
