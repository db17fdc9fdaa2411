package io.sluice.cli;

import java.io.PrintStream;

/**
 * A one-line progress bar on stderr for replays that take more than a couple of seconds, drawn when stderr is a
 * terminal ({@link Terminal}) whatever standard output is (the decisions may go to a file or a pipe); silent
 * when stderr is redirected, so logs stay clean.
 */
final class Progress {

    private static final long QUIET_NANOS = 2_000_000_000L;
    private static final long REDRAW_NANOS = 250_000_000L;
    private static final int WIDTH = 30;

    private final PrintStream err;
    private final long totalChars;
    private final boolean enabled;
    private final long started = System.nanoTime();
    private long nextDraw = started + QUIET_NANOS;
    private boolean drawn;

    /** @param totalChars the trace's size, or 0 when unknown (standard input) */
    Progress(PrintStream err, long totalChars, boolean enabled) {
        this.err = err;
        this.totalChars = totalChars;
        this.enabled = enabled;
    }

    /** Called every line; redraws at most four times a second. */
    void update(long lines, long charsRead) {
        if (!enabled || (lines & 1023) != 0) {
            return;
        }
        long now = System.nanoTime();
        if (now < nextDraw) {
            return;
        }
        nextDraw = now + REDRAW_NANOS;
        double seconds = (now - started) / 1e9;
        String rate = String.format("%,d lines  %,.0f lines/s", lines, lines / seconds);
        if (totalChars > 0) {
            double done = Math.min(1.0, (double) charsRead / totalChars);
            int filled = (int) (done * WIDTH);
            err.print("\rreplay [" + "#".repeat(filled) + " ".repeat(WIDTH - filled) + "] "
                    + String.format("%3.0f%%  ", done * 100) + rate + "  ");
        } else {
            err.print("\rreplay " + rate + "  ");
        }
        err.flush();
        drawn = true;
    }

    /** Clears the bar so what follows starts on a clean line. */
    void finish() {
        if (drawn) {
            err.print("\r" + " ".repeat(100) + "\r");
            err.flush();
        }
    }
}
