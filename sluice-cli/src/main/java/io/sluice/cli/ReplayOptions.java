package io.sluice.cli;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * What {@code sluice replay} was asked to do, as {@link ReplayCommand} read it from the command line.
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
 */
record ReplayOptions(Path rules, String trace, String store, Path out, boolean summary, Pattern keyClass,
                     Path chart, long sliceMicros, int chartWidth, int chartHeight, List<Path> compare) {

    /** Every rules file: the main one first, then the --compare ones. */
    List<Path> allRules() {
        List<Path> all = new ArrayList<>();
        all.add(rules);
        all.addAll(compare);
        return all;
    }
}
