package io.sluice.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * The command line of {@code sluice bench}.
 *
 * @param quick      the smoke profile instead of the full one
 * @param suites     the suites to run, in order
 * @param out        where the results go
 * @param docs       where benchmarks.md and the charts go, or null for none
 * @param reportOnly redraw the docs from {@code out} without measuring
 * @param filter     only rows whose {@code system/algorithm} matches, or null for all
 * @param help       whether --help was asked for
 */
public record BenchOptions(boolean quick, List<String> suites, Path out, Path docs, boolean reportOnly,
                           Pattern filter, boolean help) {

    /** Every suite, in the order they run. */
    public static final List<String> ALL_SUITES = List.of("local", "redis", "redis-attack", "memory", "server",
            "replay");

    /**
     * Every suite {@code --suites} accepts, in running order: the default ones, then {@code attack}, which is
     * only run when named because it measures what the server withstands, not how fast it decides.
     */
    public static final List<String> KNOWN_SUITES = List.of("local", "redis", "redis-attack", "memory", "server",
            "replay", "attack");

    static final String USAGE = String.join("\n",
            "usage: sluice bench [--quick] [--suites local,redis,redis-attack,memory,server,replay,attack]",
            "                    [--out FILE]",
            "                    [--docs DIR | --no-docs] [--filter REGEX] [--report-only]",
            "",
            "Measures Sluice against Guava, Bucket4j, Resilience4j, Redisson and a bare Lua script, in memory (JMH)",
            "and on a redis-server it starts itself, and `sluice serve` under wrk; writes the results as JSON and",
            "docs/benchmarks.md with charts.",
            "",
            "  --quick           smoke run of the same tables: short measurements, under 4 minutes (full: under 30)",
            "  --suites LIST     suites to run, comma-separated (default: " + String.join(",", ALL_SUITES) + "; attack",
            "                    runs only when named: probes of hostile input against `sluice serve`)",
            "  --out FILE        results file (default bench-results.json)",
            "  --docs DIR        where benchmarks.md and bench/*.png go (default docs)",
            "  --no-docs         write the results file only",
            "  --filter REGEX    only rows whose system/algorithm matches, e.g. 'sluice/gcra|bucket4j'",
            "  --report-only     measure nothing: redraw the docs from the results file",
            "",
            "Exit status: 0 done, 1 a suite failed (the results hold the rest), 2 usage.");

    /** Parses the arguments after {@code bench}. */
    public static BenchOptions parse(List<String> args) {
        boolean quick = false;
        boolean reportOnly = false;
        boolean help = false;
        List<String> suites = ALL_SUITES;
        Path out = Path.of("bench-results.json");
        Path docs = Path.of("docs");
        Pattern filter = null;
        for (int i = 0; i < args.size(); i++) {
            String arg = args.get(i);
            String name = arg;
            String value = null;
            int eq = arg.indexOf('=');
            if (arg.startsWith("--") && eq > 0) {
                name = arg.substring(0, eq);
                value = arg.substring(eq + 1);
            }
            switch (name) {
                case "--quick" -> quick = true;
                case "--report-only" -> reportOnly = true;
                case "--no-docs" -> docs = null;
                case "-h", "--help" -> help = true;
                case "--suites", "--out", "--docs", "--filter" -> {
                    if (value == null) {
                        if (i + 1 >= args.size()) {
                            throw new IllegalArgumentException(name + " needs a value");
                        }
                        value = args.get(++i);
                    }
                    switch (name) {
                        case "--suites" -> suites = suites(value);
                        case "--out" -> out = Path.of(value);
                        case "--docs" -> docs = Path.of(value);
                        default -> filter = filter(value);
                    }
                }
                default -> throw new IllegalArgumentException("unknown option " + arg);
            }
        }
        return new BenchOptions(quick, suites, out, docs, reportOnly, filter, help);
    }

    private static List<String> suites(String value) {
        List<String> chosen = new ArrayList<>();
        for (String suite : value.split(",")) {
            String name = suite.trim();
            if (!KNOWN_SUITES.contains(name)) {
                throw new IllegalArgumentException("--suites: unknown suite '" + name + "' (known: "
                        + String.join(", ", KNOWN_SUITES) + ")");
            }
            if (!chosen.contains(name)) {
                chosen.add(name);
            }
        }
        if (chosen.isEmpty()) {
            throw new IllegalArgumentException("--suites needs at least one suite");
        }
        // Always in the canonical order: the Redis suites share one server, local runs before it exists.
        return KNOWN_SUITES.stream().filter(chosen::contains).toList();
    }

    private static Pattern filter(String value) {
        try {
            return Pattern.compile(value);
        } catch (PatternSyntaxException e) {
            throw new IllegalArgumentException("--filter is not a regular expression: " + e.getDescription());
        }
    }
}
