package io.sluice.cli;

import java.io.PrintStream;
import java.util.List;

/**
 * A subcommand of {@code sluice} that lives in another module. Modules whose dependencies have no place in the
 * launcher itself (the benchmarks need JMH and every peer library) implement this interface and list the class
 * in {@code META-INF/services/io.sluice.cli.Subcommand}; {@link Main} finds them with {@link java.util.ServiceLoader}
 * when their jar is on the class path.
 *
 * <p>Implementations need a public no-argument constructor.
 */
public interface Subcommand {

    /** The word after {@code sluice} that runs this subcommand, e.g. {@code bench}. */
    String name();

    /** One line for {@code sluice help}. */
    String summary();

    /**
     * Runs the subcommand.
     *
     * @param args the arguments after the subcommand's name
     * @return the process exit code: 0 success, 1 failure, 2 usage error
     */
    int run(List<String> args, PrintStream out, PrintStream err);
}
