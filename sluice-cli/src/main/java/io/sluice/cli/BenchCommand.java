package io.sluice.cli;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine.TypeConversionException;

/**
 * {@code sluice bench}'s command line. The benchmarks themselves live in sluice-bench, whose jar carries the
 * launcher too; this class is in the launcher so that help and completion know the options without that jar,
 * and it runs the {@link BenchRunner} found on the class path. In {@code sluice.jar} there is none: the command
 * then says where the benchmarks are, exit 2.
 */
@Command(name = "bench", sortOptions = false, sortSynopsis = false,
        description = {"benchmarks against Guava, Bucket4j, Resilience4j, Redisson: bench-results.json,"
                + " docs/benchmarks.md",
                "",
                "Measures Sluice against Guava, Bucket4j, Resilience4j, Redisson and a bare Lua script, in memory"
                        + " (JMH) and on a redis-server it starts itself, and `sluice serve` under wrk; writes the"
                        + " results as JSON and docs/benchmarks.md with charts. It runs from"
                        + " sluice-bench/target/sluice-bench.jar, which ./sluice bench builds (and installs"
                        + " redis-server and wrk) first; --help needs neither.",
                ""},
        exitCodeListHeading = "%nExit status:%n",
        exitCodeList = {"0:done", "1:a suite failed (the results hold the rest), or a file could not be written",
                "2:usage, or this jar has no benchmarks (run them with ./sluice bench)"})
final class BenchCommand implements Callable<Integer> {

    @Option(names = "--quick",
            description = "smoke run of the same tables: short measurements, under 4 minutes (full: under 30)")
    boolean quick;

    @Option(names = "--suites", paramLabel = "SUITE", split = ",", defaultValue = BenchOptions.DEFAULT_SUITES,
            converter = Suite.class, completionCandidates = Suites.class,
            description = "suites to run, comma-separated: " + BenchOptions.DEFAULT_SUITES + " and attack (only"
                    + " when named: probes of hostile input against `sluice serve`). Default: ${DEFAULT-VALUE}")
    List<String> suites;

    @Option(names = "--out", paramLabel = "FILE", defaultValue = "bench-results.json",
            description = "the results file. Default: ${DEFAULT-VALUE}")
    Path out;

    @Option(names = "--docs", paramLabel = "DIR", defaultValue = "docs",
            description = "where benchmarks.md and bench/*.png go. Default: ${DEFAULT-VALUE}")
    Path docs;

    @Option(names = "--no-docs", description = "write the results file only")
    boolean noDocs;

    @Option(names = "--filter", paramLabel = "REGEX", converter = OptionConverters.Regex.class,
            description = "only rows whose system/algorithm matches, e.g. 'sluice/gcra|bucket4j'")
    Pattern filter;

    @Option(names = "--report-only", description = "measure nothing: redraw the docs from the results file")
    boolean reportOnly;

    @Mixin
    HelpOption help;

    @Spec
    CommandSpec spec;

    private final PrintStream stdout;
    private final PrintStream stderr;
    private final Supplier<Optional<BenchRunner>> runner;

    BenchCommand(PrintStream stdout, PrintStream stderr, Supplier<Optional<BenchRunner>> runner) {
        this.stdout = stdout;
        this.stderr = stderr;
        this.runner = runner;
    }

    @Override
    public Integer call() {
        BenchOptions options = options();
        Optional<BenchRunner> found = runner.get();
        if (found.isEmpty()) {
            stderr.println("sluice bench: the benchmarks are not in this jar; in a checkout, ./sluice bench builds"
                    + " and runs sluice-bench/target/sluice-bench.jar");
            return ExitStatus.USAGE;
        }
        return found.get().run(options, stdout, stderr);
    }

    /** The options as the benchmarks take them, once the rules between them hold. */
    BenchOptions options() {
        if (noDocs && spec.commandLine().getParseResult().hasMatchedOption("--docs")) {
            throw new ParameterException(spec.commandLine(), "give --docs or --no-docs, not both");
        }
        // Always in running order, each once: the Redis suites share one server, local runs before it exists.
        List<String> chosen = new ArrayList<>(BenchOptions.KNOWN_SUITES);
        chosen.retainAll(suites);
        return new BenchOptions(quick, chosen, out, noDocs ? null : docs, reportOnly, filter);
    }

    /** One name of {@code --suites}. */
    static final class Suite implements ITypeConverter<String> {
        @Override
        public String convert(String value) {
            String name = value.strip();
            if (!BenchOptions.KNOWN_SUITES.contains(name)) {
                throw new TypeConversionException("unknown suite '" + name + "'; the suites are "
                        + String.join(", ", BenchOptions.KNOWN_SUITES));
            }
            return name;
        }
    }

    /** What {@code --suites} completes to. */
    static final class Suites implements Iterable<String> {
        @Override
        public java.util.Iterator<String> iterator() {
            return BenchOptions.KNOWN_SUITES.iterator();
        }
    }
}
