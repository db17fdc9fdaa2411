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
