package io.sluice.bench;

import io.sluice.cli.Subcommand;
import java.io.PrintStream;
import java.util.List;

/** {@code sluice bench}: found by the launcher through {@link java.util.ServiceLoader} on this module's jar. */
public final class BenchCommand implements Subcommand {

    @Override
    public String name() {
        return "bench";
    }

    @Override
    public String summary() {
        return "benchmarks against Guava, Bucket4j, Resilience4j, Redisson: bench-results.json, docs/benchmarks.md";
    }

    @Override
    public int run(List<String> args, PrintStream out, PrintStream err) {
        // Redisson, Lettuce and Netty log connection chatter at INFO; the console is for the bench's progress.
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        }
        BenchOptions options;
        try {
            options = BenchOptions.parse(args);
        } catch (IllegalArgumentException e) {
            err.println("sluice bench: " + e.getMessage());
            err.println(BenchOptions.USAGE);
            return 2;
        }
        if (options.help()) {
            out.println(BenchOptions.USAGE);
            return 0;
        }
        return new BenchRun(options, options.quick() ? Profile.QUICK : Profile.FULL, out, err).execute();
    }
}
