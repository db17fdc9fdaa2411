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
        // Redisson, Lettuce and Netty log connection chatter at INFO; the console is for the bench's progress.
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        }
        return new BenchRun(options, options.quick() ? Profile.QUICK : Profile.FULL, out, err).execute();
    }
}
