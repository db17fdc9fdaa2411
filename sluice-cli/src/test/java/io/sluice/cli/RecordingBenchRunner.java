package io.sluice.cli;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A {@link BenchRunner} for {@link BenchCommandTest}, registered in the test resources as sluice-bench registers
 * its own: it keeps the options it was given and exits 1 when asked for the (unknown to it) attack suite.
 */
public final class RecordingBenchRunner implements BenchRunner {

    static final List<BenchOptions> RUNS = Collections.synchronizedList(new ArrayList<>());

    @Override
    public int run(BenchOptions options, PrintStream out, PrintStream err) {
        RUNS.add(options);
        out.println("ran " + String.join(",", options.suites()));
        return options.suites().contains("attack") ? ExitStatus.BAD_INPUT : ExitStatus.OK;
    }
}
