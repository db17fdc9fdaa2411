package io.sluice.bench;

import io.sluice.cli.BenchOptions;
import io.sluice.cli.BenchRunner;
import java.io.PrintStream;

/**
 * {@code sluice bench} once its options are read (by the launcher's {@code BenchCommand}): found through
 * {@link java.util.ServiceLoader} on this module's jar.
 */
public final class Bench implements BenchRunner {

    @Override
    public int run(BenchOptions options, PrintStream out, PrintStream err) {
        return new BenchRun(options, options.quick() ? Profile.QUICK : Profile.FULL, out, err).execute();
    }
}
