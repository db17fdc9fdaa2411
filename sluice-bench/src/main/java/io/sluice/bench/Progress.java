package io.sluice.bench;

import java.io.PrintStream;
import java.util.Locale;

/** One line per step on the console, with the time since the run started: long runs should show life. */
public final class Progress {
    private final PrintStream out;
    private final long startNanos = System.nanoTime();

    public Progress(PrintStream out) {
        this.out = out;
    }

    /** Prints {@code format} (String.format, root locale) prefixed with the elapsed time. */
    public void say(String format, Object... args) {
        long seconds = (System.nanoTime() - startNanos) / 1_000_000_000L;
        out.printf(Locale.ROOT, "[%2d:%02d] %s%n", seconds / 60, seconds % 60, String.format(Locale.ROOT, format, args));
        out.flush();
    }

    /** Seconds since the run started. */
    public double elapsedSeconds() {
        return (System.nanoTime() - startNanos) / 1e9;
    }
}
