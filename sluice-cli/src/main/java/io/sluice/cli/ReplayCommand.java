package io.sluice.cli;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code sluice replay}'s command line: its options, how their values convert, and the rules between them
 * (a usage error, exit 2, names the option). What the replay does with them is {@link Replay}.
 */
@Command(name = "replay", sortOptions = false, sortSynopsis = false,
        description = {"replays a trace of requests against rule files: decisions, summary, chart",
                "",
                "Replays a trace (one request per JSON line, in time order) against the rules on a virtual clock"
                        + " and writes one decision per line. Decisions go to standard output, or to --out; with"
                        + " --summary and no --out, standard output carries the summary alone.",
                ""},
        exitCodeListHeading = "%nExit status:%n",
        exitCodeList = {"0:done",
                "1:bad rules or trace (the message names file, line and field)",
                "2:usage: an unknown or missing option, a bad value, a file that does not exist",
                "3:the store is unavailable (Redis unreachable, failing, or too slow for the trace)"})
final class ReplayCommand implements Callable<Integer> {

    @Option(names = "--rules", required = true, paramLabel = "FILE",
            description = "rule file: named limits and the rules built from them (YAML or JSON), or an"
                    + " envoyproxy/ratelimit configuration (a rule per limit, named domain.path)")
    Path rules;

    @Option(names = "--trace", required = true, paramLabel = "FILE",
            description = "the trace; - reads standard input")
    Path trace;

    @Option(names = "--store", paramLabel = "SPEC", defaultValue = "memory",
            description = "memory, or a Redis URI: redis://, rediss://, redis-sentinel://, or two or more"
                    + " comma-separated seeds of a Cluster. Default: ${DEFAULT-VALUE}")
    String store;

    @Option(names = "--out", paramLabel = "FILE",
            description = "write the decisions to FILE (complete, or not at all). Default: standard output")
    Path out;

    @Option(names = "--summary",
            description = "per rule and key class: admitted, rejected, peak in any window, longest wait")
    boolean summary;

    @Option(names = "--key-class", paramLabel = "REGEX", converter = OptionConverters.Regex.class,
            description = "with --summary: key class = the key with each REGEX match replaced by #. Default: "
                    + KeyClasses.DIGITS)
    Pattern keyClass;

    @Option(names = "--chart", paramLabel = "FILE",
            description = "draw admitted/rejected (and waits) per time slice: SVG for a .svg file, else PNG")
    Path chart;

    @Option(names = "--slice", paramLabel = "DURATION", converter = OptionConverters.SliceMicros.class,
            description = "with --chart: the slice width, e.g. 100ms or 1m. Default: the finest that gives at"
                    + " most 200 slices")
    Long sliceMicros;

    @Option(names = "--chart-size", paramLabel = "WxH", converter = OptionConverters.ChartSize.class,
            description = "with --chart: its size in pixels. Default: " + ReplayChart.DEFAULT_WIDTH + "x("
                    + ReplayChart.FRAME_HEIGHT + " + " + ReplayChart.PANEL_HEIGHT + " per rules file)")
    OptionConverters.Size chartSize;

    @Option(names = "--compare", paramLabel = "FILE", arity = "1..*",
            description = "also replay the trace under these rules files, for --summary and --chart (one chart"
                    + " panel each)")
    List<Path> compare = new ArrayList<>();

    @Mixin
    HelpOption help;

    @Spec
    CommandSpec spec;

    private final PrintStream stdout;
    private final PrintStream stderr;

    ReplayCommand(PrintStream stdout, PrintStream stderr) {
        this.stdout = stdout;
        this.stderr = stderr;
    }

    @Override
    public Integer call() {
        return Replay.run(options(), stdout, stderr);
    }

    /** The options as the replay takes them, once the rules between them hold. */
    ReplayOptions options() {
        if (keyClass != null && !summary) {
            throw usage("--key-class only applies with --summary");
        }
        if ((sliceMicros != null || chartSize != null) && chart == null) {
            throw usage("--slice and --chart-size only apply with --chart");
        }
        if (!compare.isEmpty() && !summary && chart == null) {
            throw usage("--compare shows in --summary and --chart; give at least one of them");
        }
        return new ReplayOptions(rules, trace.toString(), store, out, summary, keyClass, chart,
                sliceMicros == null ? 0 : sliceMicros,
                chartSize == null ? ReplayChart.DEFAULT_WIDTH : chartSize.width(),
                chartSize == null ? 0 : chartSize.height(), List.copyOf(compare));
    }

    private ParameterException usage(String message) {
        return new ParameterException(spec.commandLine(), message);
    }
}
