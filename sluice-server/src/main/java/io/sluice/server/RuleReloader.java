package io.sluice.server;

import io.sluice.Store;
import io.sluice.rules.RuleFileException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches the rule files (and directories of them, {@link RuleSources}) and swaps in a new {@link RuleSet} when they change; counters survive because the
 * store keeps them by rule name (see {@link RuleSet}). A file that no longer parses is rejected with its file,
 * line and field in the log (and in {@code /v1/rules}); the running rules stay until a valid file replaces it.
 *
 * <p>Files are polled rather than watched: a poll sees every way a file changes (an editor's atomic rename, a
 * Kubernetes ConfigMap's symlink swap, a network file system) for the price of a {@code stat} per file per
 * interval. A file is re-read only when its modification time, size or identity changed and then stayed the
 * same for one more interval — so a file caught half-written by a non-atomic write is not refused — and a new
 * set is built only when the content changed.
 */
final class RuleReloader implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(RuleReloader.class);

    /** What a reload did. */
    enum Result { APPLIED, UNCHANGED, REJECTED }

    private final RuleSources sources;
    private final Store store;
    private final AtomicReference<RuleSet> current;
    private final ServerMetrics metrics;
    private final ScheduledExecutorService timer;
    private List<Object> seen;
    /** A changed fingerprint waiting to hold still for one interval, or null. */
    private List<Object> settling;
    private byte[] contentHash;
    private volatile String lastError;
    private String lastPollError;

    RuleReloader(List<Path> files, Store store, AtomicReference<RuleSet> current, ServerMetrics metrics,
                 Duration interval) throws IOException {
        this.sources = new RuleSources(files);
        this.store = store;
        this.current = current;
        this.metrics = metrics;
        this.seen = sources.fingerprint();
        this.contentHash = hash(sources.read());
        if (files.isEmpty() || interval.isZero()) {
            timer = null;
        } else {
            timer = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "sluice-rule-reloader");
                t.setDaemon(true);
                return t;
            });
            long millis = Math.max(1, interval.toMillis());
            timer.scheduleWithFixedDelay(this::poll, millis, millis, TimeUnit.MILLISECONDS);
        }
    }

    /** The last rejected change, {@code FILE:LINE:COLUMN: FIELD: PROBLEM}; null once a valid one applied. */
    String lastError() {
        return lastError;
    }

    private void poll() {
        try {
            List<Object> now = sources.fingerprint();
            if (now.equals(seen)) {
                settling = null;
            } else if (now.equals(settling)) {
                settling = null;
                reload();
            } else {
                settling = now;
            }
            lastPollError = null;
        } catch (RuntimeException | IOException e) {
            // A file being replaced may be missing for a moment; say so once, not on every poll.
            String error = String.valueOf(e);
            if (!error.equals(lastPollError)) {
                LOG.atError().setMessage("rule files cannot be read; the running rules stay")
                        .addKeyValue("event", "rules_unreadable").addKeyValue("error", error).log();
            }
            lastPollError = error;
        }
    }

    /**
     * Reads the files now and applies them if they changed and are valid.
     *
     * @throws IOException when a file cannot be read (the running rules stay)
     */
    synchronized Result reload() throws IOException {
        seen = sources.fingerprint();
        RuleSources.Read read = sources.read();
        byte[] hash = hash(read);
        if (Arrays.equals(hash, contentHash)) {
            return Result.UNCHANGED;
        }
        contentHash = hash;
        List<String> names = read.names();
        RuleSet next;
        try {
            next = current.get().rebind(RuleSet.combine(names, read.texts()), store);
        } catch (RuleFileException e) {
            // Counted before it is published, so that whoever sees the error also sees it counted.
            metrics.reload(false);
            lastError = e.getMessage();
            LOG.atError().setMessage("rule file change rejected; the running rules stay")
                    .addKeyValue("event", "rules_rejected")
                    .addKeyValue("file", e.source())
                    .addKeyValue("line", e.line())
                    .addKeyValue("column", e.column())
                    .addKeyValue("field", e.field())
                    .addKeyValue("problem", e.problem())
                    .log();
            return Result.REJECTED;
        }
        current.set(next);
        lastError = null;
        metrics.reload(true);
        metrics.rulesLoaded(next.limitCount());
        LOG.atInfo().setMessage("rules reloaded")
                .addKeyValue("event", "rules_reloaded")
                .addKeyValue("files", String.join(",", names))
                .addKeyValue("rules", next.summary())
                .log();
        return Result.APPLIED;
    }

    /** A digest of the files' names and texts: a file added to or removed from a directory changes it. */
    private static byte[] hash(RuleSources.Read read) {
        try {
            MessageDigest d = MessageDigest.getInstance("SHA-256");
            List<String> parts = new ArrayList<>(read.names());
            parts.addAll(read.texts());
            for (String t : parts) {
                byte[] bytes = t.getBytes(StandardCharsets.UTF_8);
                d.update(Integer.toString(bytes.length).getBytes(StandardCharsets.US_ASCII));
                d.update((byte) 0);
                d.update(bytes);
            }
            return d.digest();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }

    @Override
    public void close() {
        if (timer != null) {
            timer.shutdownNow();
        }
    }
}
