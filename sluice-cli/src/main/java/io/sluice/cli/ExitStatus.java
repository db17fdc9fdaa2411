package io.sluice.cli;

/**
 * The exit statuses of every {@code sluice} command, each with one meaning (docs/reference/cli.md has the table).
 * {@code sluice serve} lives in sluice-server, which cannot see this class; its statuses are the same numbers,
 * checked through {@code Main.run} by {@code CommandLineTest}.
 */
public final class ExitStatus {

    /** The command did what was asked. */
    public static final int OK = 0;
    /**
     * Bad input: a rules file, trace, config file or setting that is invalid, or that the machine refuses (a port
     * already in use); the message names the file, line and field. For {@code bench}: a suite failed.
     */
    public static final int BAD_INPUT = 1;
    /** The command line cannot be used: an unknown command or option, a missing value, a file that does not exist. */
    public static final int USAGE = 2;
    /** The store is unavailable: Redis cannot be reached, fails, or cannot keep up with a replay. */
    public static final int STORE_UNAVAILABLE = 3;

    private ExitStatus() {}
}
