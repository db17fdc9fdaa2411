package io.sluice.cli;

import java.io.PrintStream;

/**
 * What runs {@code sluice bench}: the benchmarks module (sluice-bench) implements it and lists the class in
 * {@code META-INF/services/io.sluice.cli.BenchRunner}; {@link BenchCommand} finds it with
 * {@link java.util.ServiceLoader} when that jar is on the class path. The launcher itself does not depend on
 * JMH or the peer libraries, yet knows the command's options, so that {@code sluice help bench}, its
 * {@code --help} and the completion script need no benchmarks jar.
 *
 * <p>Implementations need a public no-argument constructor.
 */
public interface BenchRunner {

    /**
     * Runs the benchmarks.
     *
     * @return the exit status: 0 done, 1 a suite failed or a file could not be written ({@link ExitStatus})
     */
    int run(BenchOptions options, PrintStream out, PrintStream err);
}
