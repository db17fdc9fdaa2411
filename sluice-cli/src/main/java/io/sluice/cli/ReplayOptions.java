package io.sluice.cli;

import io.sluice.rules.Durations;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * The command line of {@code sluice replay}. Options take their value as the next argument or after
 * {@code =}; {@code --compare} takes one or more files (and may be repeated).
 *
 * @param rules        the rules file (YAML or JSON)
 * @param trace        the trace file, or {@code -} for standard input
 * @param store        the {@code --store} spec
 * @param out          where the decisions go, or null for standard output
 * @param summary      whether to print the summary
 * @param keyClass     the {@code --key-class} pattern, or null for digit runs
 * @param chart        the chart file, or null
 * @param sliceMicros  the {@code --slice} width in µs, or 0 to choose one
 * @param chartWidth   chart width in pixels
 * @param chartHeight  chart height in pixels, or 0 for the default for the number of panels
 * @param compare      further rules files replayed on the same trace, for the summary and the chart
 * @param help         whether {@code --help} was asked for
 */
record ReplayOptions(Path rules, String trace, String store, Path out, boolean summary, Pattern keyClass,
                     Path chart, long sliceMicros, int chartWidth, int chartHeight, List<Path> compare,
                     boolean help) {

    static final String USAGE = String.join("\n",
            "usage: sluice replay --rules RULES.yaml --trace TRACE.jsonl [--store memory|redis://...]",
            "                     [--out DECISIONS.jsonl] [--summary [--key-class REGEX]]",
            "                     [--chart CHART.png|CHART.svg [--slice DURATION] [--chart-size WIDTHxHEIGHT]]",
            "                     [--compare RULES2.yaml ...]",
            "",
            "Replays a trace (one request per JSON line, in time order) against the rules on a virtual clock and",
            "writes one decision per line. Decisions go to standard output, or to --out; with --summary and no",
            "--out, standard output carries the summary alone.",
            "",
            "  --rules FILE         rule file: named limits and the rules built from them (YAML or JSON),",
            "                       or an envoyproxy/ratelimit configuration (a rule per limit, named domain.path)",
            "  --trace FILE         the trace; - reads standard input",
            "  --store SPEC         memory (default), or a redis:// URI",
            "  --out FILE           write the decisions to FILE (complete, or not at all)",
            "  --summary            per rule and key class: admitted, rejected, peak in any window, longest wait",
            "  --key-class REGEX    key class = the key with each REGEX match replaced by # (default [0-9]+)",
            "  --chart FILE         draw admitted/rejected (and waits) per time slice, PNG or SVG by extension",
            "  --slice DURATION     chart slice width, e.g. 100ms or 1m (default: at most 200 slices)",
            "  --chart-size WxH     chart size in pixels (default 1000 x (120 + 260 per rules file))",
            "  --compare FILE...    also replay the trace under these rules files (one chart panel each)",
            "",
            "  -h, --help           this text",
            "",
            "Exit status: 0 done, 1 bad rules or trace (the message names file, line and field), 2 usage,",
            "3 the store is unavailable (Redis unreachable, failing, or too slow for the trace).");

    /** The options that take a value. */
    private static final Set<String> VALUED = Set.of("--rules", "--trace", "--store", "--out", "--chart",
            "--key-class", "--slice", "--chart-size");
    private static final Pattern SIZE = Pattern.compile("([0-9]{2,5})x([0-9]{2,5})");

    static ReplayOptions parse(String[] args) throws UsageException {
        Path rules = null;
        String trace = null;
        String store = "memory";
        Path out = null;
        boolean summary = false;
        Pattern keyClass = null;
        Path chart = null;
        long slice = 0;
        int width = ReplayChart.DEFAULT_WIDTH;
        int height = 0;
        List<Path> compare = new ArrayList<>();
        boolean help = false;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            String inline = null;
            int eq = arg.indexOf('=');
            if (arg.startsWith("--") && eq > 0) {
                inline = arg.substring(eq + 1);
                arg = arg.substring(0, eq);
            }
            switch (arg) {
                case "-h":
                case "--help":
                    help = true;
                    break;
                case "--summary":
                    summary = true;
                    break;
                case "--compare": {
                    int before = compare.size();
                    if (inline != null) {
                        compare.add(Path.of(inline));
                    }
                    while (i + 1 < args.length && !args[i + 1].startsWith("--")) {
                        compare.add(Path.of(args[++i]));
                    }
                    if (compare.size() == before) {
                        throw new UsageException("--compare needs at least one rules file");
                    }
                    break;
                }
                default: {
                    if (!VALUED.contains(arg)) {
                        throw new UsageException(arg.startsWith("-") ? "unknown option '" + arg + "'"
                                : "unexpected argument '" + arg + "'");
                    }
                    String value = inline != null ? inline : valueOf(args, ++i, arg);
                    switch (arg) {
                        case "--rules":
                            rules = Path.of(value);
                            break;
                        case "--trace":
                            trace = value;
                            break;
                        case "--store":
                            store = value;
                            break;
                        case "--out":
                            out = Path.of(value);
                            break;
                        case "--chart":
                            chart = Path.of(value);
                            break;
                        case "--key-class":
                            keyClass = pattern(value);
                            break;
                        case "--slice":
                            slice = slice(value);
                            break;
                        case "--chart-size": {
                            Matcher m = SIZE.matcher(value);
                            if (!m.matches()) {
                                throw new UsageException("--chart-size must be WIDTHxHEIGHT in pixels, e.g."
                                        + " 1200x800, was '" + value + "'");
                            }
                            width = Integer.parseInt(m.group(1));
                            height = Integer.parseInt(m.group(2));
                            break;
                        }
                        default:
                            throw new IllegalStateException("option without a case: " + arg);
                    }
                }
            }
        }
        if (!help) {
            if (rules == null) {
                throw new UsageException("--rules is required");
            }
            if (trace == null) {
                throw new UsageException("--trace is required");
            }
            if (keyClass != null && !summary) {
                throw new UsageException("--key-class only applies with --summary");
            }
            if ((slice != 0 || height != 0) && chart == null) {
                throw new UsageException("--slice and --chart-size only apply with --chart");
            }
            if (!compare.isEmpty() && !summary && chart == null) {
                throw new UsageException("--compare shows in --summary and --chart; give at least one of them");
            }
        }
        return new ReplayOptions(rules, trace, store, out, summary, keyClass, chart, slice, width, height,
                List.copyOf(compare), help);
    }

    /** Every rules file: the main one first, then the --compare ones. */
    List<Path> allRules() {
        List<Path> all = new ArrayList<>();
        all.add(rules);
        all.addAll(compare);
        return all;
    }

    private static String valueOf(String[] args, int i, String option) throws UsageException {
        if (i >= args.length) {
            throw new UsageException(option + " needs a value");
        }
        return args[i];
    }

    private static Pattern pattern(String regex) throws UsageException {
        try {
            return Pattern.compile(regex);
        } catch (PatternSyntaxException e) {
            throw new UsageException("--key-class is not a valid regular expression: " + e.getDescription());
        }
    }

    private static long slice(String text) throws UsageException {
        try {
            long micros = Durations.parse(text).toNanos() / 1_000;
            if (micros < 1_000) {
                throw new UsageException("--slice must be at least 1ms, was " + text);
            }
            return micros;
        } catch (IllegalArgumentException e) {
            throw new UsageException("--slice: " + e.getMessage());
        }
    }
}
