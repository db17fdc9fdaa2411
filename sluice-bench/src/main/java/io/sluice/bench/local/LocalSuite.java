package io.sluice.bench.local;

import io.sluice.bench.BenchContext;
import io.sluice.bench.Measurement;
import io.sluice.bench.Profile;
import io.sluice.bench.Suite;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.regex.Pattern;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * The local suite: JMH, run programmatically so that {@code sluice bench} chooses the matrix and reads the
 * results ({@link RunResult}) instead of parsing JMH's text. One {@link Runner} per benchmark class and thread
 * count; JMH's own output goes to a log file per runner.
 */
public final class LocalSuite implements Suite {

    /** A benchmark class with the name and nearest algorithm of the system it measures. */
    private record Subject(String system, String algorithm, Class<?> benchmark) {}

    private static final List<Subject> PEERS = List.of(
            new Subject("guava", "smooth_bursty", GuavaLocalBenchmark.class),
            new Subject("bucket4j", "token_bucket", Bucket4jLocalBenchmark.class),
            new Subject("resilience4j", "refresh_period", Resilience4jLocalBenchmark.class));

    @Override
    public String name() {
        return "local";
    }

    @Override
    public List<Measurement> run(BenchContext context) {
        Profile profile = context.profile();
        List<Measurement> rows = new ArrayList<>();
        List<Subject> subjects = new ArrayList<>();
        subjects.add(new Subject("sluice", null, SluiceLocalBenchmark.class));
        PEERS.stream().filter(p -> profile.localPeers().contains(p.system())).forEach(subjects::add);
        // Scenario by scenario, every system in turn: rows that are compared are measured minutes apart at most,
        // so a change in the machine's background load hits both sides of a ratio alike.
        for (int threads : profile.localThreads()) {
            for (int keys : profile.localKeyCounts()) {
                for (LocalMode mode : LocalMode.values()) {
                    context.progress().say("local: %,d %s, %d %s, %s", keys, keys == 1 ? "key" : "keys", threads,
                            threads == 1 ? "thread" : "threads", mode.id());
                    for (Subject subject : subjects) {
                        rows.addAll(runScenario(context, subject, new Scenario(threads, keys, mode)));
                    }
                }
            }
        }
        return rows;
    }

    /** One cell of the matrix: thread count, key count, mode. */
    private record Scenario(int threads, int keys, LocalMode mode) {
        String fileName() {
            return "t" + threads + "-k" + keys + "-" + mode.id();
        }
    }

    private static List<Measurement> runScenario(BenchContext context, Subject subject, Scenario scenario) {
        List<String> algorithms = subject.algorithm() == null
                ? context.profile().localSluiceAlgorithms().stream()
                        .filter(a -> context.selected(subject.system(), a)).toList()
                : context.selected(subject.system(), subject.algorithm()) ? List.of(subject.algorithm()) : List.of();
        if (algorithms.isEmpty()) {
            return List.of();
        }
        Path log = context.logDir().resolve("jmh-" + subject.benchmark().getSimpleName() + "-" + scenario.fileName()
                + ".log");
        Collection<RunResult> results;
        try {
            results = runJmh(context, subject, algorithms, scenario, log);
        } catch (RunnerException e) {
            // One library failing must not cost the others' rows; JMH's log has the details.
            context.progress().say("  %s failed: %s (see %s)", subject.system(), e.getMessage(), log);
            return List.of(Measurement.of("local", subject.system()).algorithm(subject.algorithm())
                    .mode(scenario.mode().id()).keys(scenario.keys()).threads(scenario.threads())
                    .note("failed: " + e.getMessage() + "; see " + log).build());
        }
        List<Measurement> rows = new ArrayList<>();
        for (RunResult result : results) {
            Measurement row = toMeasurement(subject, result);
            rows.add(row);
            context.progress().say("  %-12s %-15s %8.1f ns/op, %,12.0f decisions/s, %5.1f%% admitted, %4.0f B/op",
                    row.system(), row.algorithm(), row.nsPerOp(), row.decisionsPerS(),
                    100 * (row.admittedFraction() == null ? 0 : row.admittedFraction()),
                    row.allocBytesPerOp() == null ? Double.NaN : row.allocBytesPerOp());
        }
        return rows;
    }

    private static Collection<RunResult> runJmh(BenchContext context, Subject subject, List<String> algorithms,
                                                Scenario scenario, Path log) throws RunnerException {
        Profile p = context.profile();
        ChainedOptionsBuilder options = new OptionsBuilder()
                .include("^" + Pattern.quote(subject.benchmark().getName()) + "\\.")
                .param("mode", scenario.mode().id())
                .param("keys", Integer.toString(scenario.keys()))
                .threads(scenario.threads())
                .forks(p.jmhForks())
                .warmupIterations(p.jmhWarmupIterations())
                .warmupTime(TimeValue.milliseconds(p.jmhWarmupMillis()))
                .measurementIterations(p.jmhIterations())
                .measurementTime(TimeValue.milliseconds(p.jmhIterationMillis()))
                // A fixed heap keeps GC behaviour alike across benchmarks; 10,000 keys need little.
                .jvmArgsAppend("-Xms1g", "-Xmx1g")
                // Allocation per call: a cost that the machine's background load cannot blur.
                .addProfiler(GCProfiler.class)
                .shouldFailOnError(true)
                .output(log.toString());
        if (subject.algorithm() == null) {
            options.param("algorithm", algorithms.toArray(String[]::new));
        }
        return new Runner(options.build()).run();
    }

    /** A secondary result (an {@link Outcomes} counter), NaN when absent. */
    private static double secondaryScore(RunResult result, String name) {
        Result<?> secondary = result.getSecondaryResults().get(name);
        return secondary == null ? Double.NaN : secondary.getScore();
    }

    private static Measurement toMeasurement(Subject subject, RunResult result) {
        BenchmarkParams params = result.getParams();
        LocalMode mode = LocalMode.of(params.getParam("mode"));
        String algorithm = subject.algorithm() != null ? subject.algorithm() : params.getParam("algorithm");
        int threads = params.getThreads();
        Result<?> primary = result.getPrimaryResult();
        // The median of the iterations: one disturbed iteration on a shared machine does not move it.
        double nsPerOp = primary.getStatistics().getPercentile(50);
        double admitted = secondaryScore(result, "admitted");
        double rejected = secondaryScore(result, "rejected");
        return Measurement.of("local", subject.system())
                .mode(mode.id())
                .algorithm(algorithm)
                .config(mode.describe())
                .keys(Integer.parseInt(params.getParam("keys")))
                .threads(threads)
                .nsPerOp(nsPerOp, primary.getScoreError())
                // Average time is per thread: all threads together decide threads/nsPerOp per nanosecond.
                .decisionsPerS(threads * 1e9 / nsPerOp)
                .allocBytesPerOp(secondaryScore(result, "gc.alloc.rate.norm"))
                .admittedFraction(admitted / (admitted + rejected))
                .runs(params.getMeasurement().getCount() * Math.max(1, params.getForks()))
                .build();
    }
}
