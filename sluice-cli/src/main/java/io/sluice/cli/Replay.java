package io.sluice.cli;

import io.sluice.rules.Millis;
import io.sluice.redis.RedisStoreException;
import io.sluice.rules.EnvoyConfig;
import io.sluice.rules.RuleFile;
import io.sluice.rules.RuleFileException;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.Writer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code sluice replay}: replays a trace of requests against rule files on a virtual clock and reports what
 * the limiter decides, line by line, with an optional summary and chart. Its options: {@link ReplayCommand}.
 *
 * <p>The trace is read and the decisions written one line at a time, so memory does not grow with the trace.
 * Every rules file replays on its own store. Output files are written to a temporary file beside the target
 * and moved into place only when the whole replay succeeded: a failed replay never leaves a file that looks
 * complete.
 */
final class Replay {

    private static final int BUFFER = 1 << 16;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final ReplayOptions options;
    private final PrintStream out;
    private final PrintStream err;
    /** Whether to draw the progress bar: stderr is this process's and a terminal. */
    private final boolean progressBar;
    /** The store as the summary names it (no credentials). */
    private String storeName;

    /** One rules file's replay and what is gathered from it. */
    private static final class Run {
        final Simulation simulation;
        final Summary summary;
        final Timeline timeline;
        long admitted;
        long rejected;

        Run(Simulation simulation, Summary summary, Timeline timeline) {
            this.simulation = simulation;
            this.summary = summary;
            this.timeline = timeline;
        }
    }

    private Replay(ReplayOptions options, PrintStream out, PrintStream err, boolean progressBar) {
        this.options = options;
        this.out = out;
        this.err = err;
        this.progressBar = progressBar;
    }

    /** Runs the command; returns the exit code ({@link ExitStatus}: 0 done, 1 bad input, 2 usage, 3 store). */
    static int run(ReplayOptions options, PrintStream out, PrintStream err) {
        boolean progressBar;
        try {
            progressBar = err == System.err && Terminal.stderrIsTerminal();
        } catch (IllegalArgumentException e) {
            return usageError(err, e.getMessage());
        }
        // Charts draw with AWT, which must know before its first use that there is no display to draw on.
        System.setProperty("java.awt.headless", "true");
        try {
            new Replay(options, out, err, progressBar).replay();
            return 0;
        } catch (UsageException e) {
            return usageError(err, e.getMessage());
        } catch (InputException e) {
            err.println("sluice replay: " + e.getMessage());
            return 1;
        } catch (IOException e) {
            err.println("sluice replay: " + e);  // e.g. a disk full while writing; the type says what happened
            return 1;
        } catch (StoreException e) {
            // What was decided before the failure stays written to standard output; --out and --chart are not
            // written.
            err.println("sluice replay: " + e.getMessage());
            return ExitStatus.STORE_UNAVAILABLE;
        }
    }

    /** A Redis failure as a {@link StoreException}, with {@code where} (a trace line) when known. */
    private static StoreException storeFailed(String where, RedisStoreException e) {
        String message = e.getMessage();
        if (message != null && message.contains("MOVED")) {
            message += " (this Redis is part of a Cluster: give two or more seed nodes, comma-separated)";
        }
        return new StoreException(where == null ? message : where + ": " + message, e);
    }

    private static int usageError(PrintStream err, String message) {
        err.println("sluice replay: " + message);
        err.println("(sluice replay --help shows the options)");
        return 2;
    }

    private void replay() throws UsageException, InputException, IOException, StoreException {
        ReplayStore stores = ReplayStore.forSpec(options.store());
        storeName = stores.describe();
        List<RuleFile> ruleFiles = new ArrayList<>();
        for (Path file : options.allRules()) {
            ruleFiles.add(readRules(file));
        }
        String traceName = options.trace().equals("-") ? "<stdin>" : options.trace();
        List<Run> runs = new ArrayList<>();
        // Created now, so an unwritable --chart stops the replay before it starts, not after it.
        Path chartTemp = options.chart() == null ? null : tempBeside(options.chart());
        try {
            for (RuleFile rules : ruleFiles) {
                Simulation simulation;
                try {
                    simulation = new Simulation(rules, stores, traceName);
                } catch (RedisStoreException e) {
                    throw storeFailed(null, e);
                }
                runs.add(new Run(simulation,
                        options.summary() ? new Summary(keyClasses()) : null,
                        options.chart() == null ? null
                                : options.sliceMicros() > 0 ? Timeline.fixed(options.sliceMicros()) : Timeline.adaptive()));
            }
            try (TraceReader trace = openTrace(traceName); Output decisions = openDecisions()) {
                replayAll(trace, runs, decisions, stores.maxLagMicros());
                if (chartTemp != null) {
                    drawChart(chartTemp, traceName, runs);
                }
                decisions.commit();
            }
            if (chartTemp != null) {
                moveIntoPlace(chartTemp, options.chart());
            }
            if (options.summary()) {
                printSummaries(runs);
            }
        } finally {
            for (Run run : runs) {
                run.simulation.close();
            }
            if (chartTemp != null) {
                Files.deleteIfExists(chartTemp);
            }
        }
    }

    /**
     * Replays every line on every run. {@code maxLagMicros} is how much longer than the trace's own time the
     * replay of any stretch of it may take ({@link ReplayStore#maxLagMicros}); beyond it the replay stops with
     * a {@link StoreException} before deciding the line.
     */
    private void replayAll(TraceReader trace, List<Run> runs, Output decisions, long maxLagMicros)
            throws IOException, InputException, UsageException, StoreException {
        long size = options.trace().equals("-") ? 0 : Files.size(Path.of(options.trace()));
        Progress progress = new Progress(err, size, progressBar);
        DecisionWriter writer = decisions.writer() == null ? null : new DecisionWriter(decisions.writer());
        // The lag is real time minus trace time; it may fall (the trace skips ahead) but must never rise more
        // than maxLagMicros above its lowest point so far.
        long minLag = Long.MAX_VALUE;
        int minLagLine = 0;
        try {
            TraceLine line;
            while ((line = trace.next()) != null) {
                if (maxLagMicros != Long.MAX_VALUE) {
                    long lag = System.nanoTime() / 1_000 - line.timeMicros();
                    if (lag < minLag) {
                        minLag = lag;
                        minLagLine = line.line();
                    } else if (lag - minLag > maxLagMicros) {
                        throw new StoreException(trace.source() + ":" + line.line() + ": replaying lines "
                                + minLagLine + " to " + line.line() + " took " + Millis.format(lag - minLag)
                                + " ms more real time than the trace's own time; the Redis store keeps each key for"
                                + " its remaining time on the trace's clock plus a second, counted by Redis in real"
                                + " time, so state could have expired early and the"
                                + " decisions would not be the library's. Replay this trace with --store memory",
                                null);
                    }
                }
                for (int i = 0; i < runs.size(); i++) {
                    Run run = runs.get(i);
                    Simulation.Outcome outcome;
                    try {
                        outcome = run.simulation.apply(line);
                    } catch (RedisStoreException e) {
                        throw storeFailed(trace.source() + ":" + line.line(), e);
                    }
                    if (i == 0 && writer != null) {
                        writer.write(line, outcome);
                    }
                    gather(run, line, outcome);
                }
                progress.update(trace.lines(), trace.charsRead());
            }
        } catch (CharacterCodingException e) {
            throw InputException.at(trace.source(), trace.lines() + 1, "", "not valid UTF-8");
        } finally {
            progress.finish();
        }
    }

    private static void gather(Run run, TraceLine line, Simulation.Outcome outcome) throws UsageException {
        if (run.summary != null) {
            run.summary.record(line, outcome);
        }
        if (line.op().charges()) {
            boolean allowed = outcome.decision().allowed();
            if (allowed) {
                run.admitted++;
            } else {
                run.rejected++;
            }
            if (run.timeline != null) {
                run.timeline.record(line.timeMicros(), allowed, outcome.decision().waitMicros());
            }
        }
    }

    private void printSummaries(List<Run> runs) {
        for (int i = 0; i < runs.size(); i++) {
            if (i > 0) {
                out.println();
            }
            Run run = runs.get(i);
            run.summary.print(out, "rules " + run.simulation.source() + " (store " + storeName + ")");
        }
        out.flush();
    }

    private void drawChart(Path file, String traceName, List<Run> runs) throws IOException {
        List<String> titles = ReplayChart.panelTitles(options.allRules());
        List<ReplayChart.Panel> panels = new ArrayList<>();
        for (int i = 0; i < runs.size(); i++) {
            Run run = runs.get(i);
            panels.add(new ReplayChart.Panel(titles.get(i), run.timeline.slices(ReplayChart.MAX_SLICES),
                    run.timeline.anyWait(), run.admitted, run.rejected));
        }
        int height = options.chartHeight() > 0 ? options.chartHeight()
                : ReplayChart.FRAME_HEIGHT + ReplayChart.PANEL_HEIGHT * panels.size();
        String traceTitle = options.trace().equals("-") ? traceName : ReplayChart.fileName(Path.of(options.trace()));
        ReplayChart.write(file, ReplayChart.isSvg(options.chart()), "sluice replay of " + traceTitle, panels,
                options.chartWidth(), height);
    }

    private KeyClasses keyClasses() {
        return options.keyClass() == null ? KeyClasses.digitRuns() : KeyClasses.matching(options.keyClass());
    }

    private static RuleFile readRules(Path file) throws UsageException, InputException {
        try {
            String text = Files.readString(file);
            if (EnvoyConfig.looksLikeEnvoyConfig(text)) {
                // The same envoyproxy/ratelimit files sluice serve takes: each limit is a rule named by its
                // full key, which the trace's "rule" names.
                return EnvoyConfig.parse(file.toString(), text).asRuleFile();
            }
            return RuleFile.parse(file.toString(), text);
        } catch (RuleFileException e) {
            throw new InputException(e.getMessage());
        } catch (NoSuchFileException e) {
            throw new UsageException("cannot read rules file " + file + ": no such file");
        } catch (IOException e) {
            throw new UsageException("cannot read rules file " + file + ": " + e);
        }
    }

    private TraceReader openTrace(String traceName) throws UsageException {
        if (options.trace().equals("-")) {
            return new TraceReader(new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8),
                    BUFFER), traceName);
        }
        try {
            return new TraceReader(new BufferedReader(Files.newBufferedReader(Path.of(options.trace())), BUFFER),
                    traceName);
        } catch (NoSuchFileException e) {
            throw new UsageException("cannot read trace " + options.trace() + ": no such file");
        } catch (IOException e) {
            throw new UsageException("cannot read trace " + options.trace() + ": " + e);
        }
    }

    private Output openDecisions() throws IOException, UsageException {
        Path target = options.out();
        if (target == null) {
            // Standard output carries the decisions unless it carries the summary.
            return new Output(options.summary() ? null
                    : new BufferedWriter(new OutputStreamWriter(out, StandardCharsets.UTF_8), BUFFER), null, null);
        }
        if (Files.exists(target) && !Files.isRegularFile(target)) {
            // /dev/null, a pipe: nothing to replace atomically.
            return new Output(Files.newBufferedWriter(target), null, target);
        }
        Path temp = tempBeside(target);
        return new Output(Files.newBufferedWriter(temp), temp, target);
    }

    /**
     * A new empty file next to {@code target}, to be moved onto it. Created with {@link Files#createFile} rather
     * than {@code createTempFile}, whose owner-only permissions the moved file would keep.
     */
    private static Path tempBeside(Path target) throws IOException, UsageException {
        Path dir = target.toAbsolutePath().getParent();
        for (;;) {
            Path temp = dir.resolve("." + target.getFileName() + "." + Long.toUnsignedString(RANDOM.nextLong(), 36)
                    + ".tmp");
            try {
                return Files.createFile(temp);
            } catch (FileAlreadyExistsException e) {
                // another name
            } catch (NoSuchFileException e) {
                throw new UsageException("cannot write " + target + ": no such directory " + dir);
            } catch (AccessDeniedException e) {
                throw new UsageException("cannot write " + target + ": permission denied in " + dir);
            }
        }
    }

    private static void moveIntoPlace(Path temp, Path target) throws IOException {
        try {
            Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /**
     * Where the decisions go: standard output (never closed here), a file written in place, or a temporary
     * file moved onto the target by {@link #commit()}; closing without a commit deletes the temporary file.
     */
    private static final class Output implements AutoCloseable {
        private final Writer writer;
        private final Path temp;
        private final Path target;
        private boolean committed;

        Output(Writer writer, Path temp, Path target) {
            this.writer = writer;
            this.temp = temp;
            this.target = target;
        }

        /** The writer, or null when decisions are not written. */
        Writer writer() {
            return writer;
        }

        void commit() throws IOException {
            if (writer == null) {
                return;
            }
            if (temp == null && target == null) {
                writer.flush();
                return;
            }
            writer.close();
            if (temp != null) {
                moveIntoPlace(temp, target);
            }
            committed = true;
        }

        @Override
        public void close() throws IOException {
            if (writer == null) {
                return;
            }
            if (temp == null && target == null) {
                writer.flush(); // what was decided before an error still reaches standard output
                return;
            }
            if (!committed) {
                writer.close();
                if (temp != null) {
                    Files.deleteIfExists(temp);
                }
            }
        }
    }
}
