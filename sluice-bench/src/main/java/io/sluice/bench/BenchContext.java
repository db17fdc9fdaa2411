package io.sluice.bench;

import io.sluice.bench.redis.LocalRedis;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * What every suite of one run shares: the profile, the console, where logs go, the optional filter, the
 * versions of the programs the suites met (Redis, redis-benchmark) for the results, and the redis-server the
 * Redis suites measure against (started by the first suite that asks, stopped by {@link #close}).
 */
public final class BenchContext implements AutoCloseable {
    private final Profile profile;
    private final Progress progress;
    private final Path logDir;
    private final Pattern filter;
    private final Map<String, String> programVersions = new TreeMap<>();
    private LocalRedis redis;

    public BenchContext(Profile profile, Progress progress, Path logDir, Pattern filter) {
        this.profile = profile;
        this.progress = progress;
        this.logDir = logDir;
        this.filter = filter;
    }

    public Profile profile() {
        return profile;
    }

    public Progress progress() {
        return progress;
    }

    /** Where suites write the raw output of the tools they drive (JMH, redis-benchmark, sluice replay). */
    public Path logDir() {
        return logDir;
    }

    /** Whether the row named {@code system/algorithm} is selected by {@code --filter}. */
    public boolean selected(String system, String algorithm) {
        return filter == null || filter.matcher(system + "/" + algorithm).find();
    }

    /** Records the version of a program met during the run, e.g. {@code redis -> 7.0.15}. */
    public synchronized void programVersion(String program, String version) {
        programVersions.put(program, version);
    }

    public synchronized Map<String, String> programVersions() {
        return new TreeMap<>(programVersions);
    }

    /**
     * The redis-server of this run, started on first use.
     *
     * @throws IllegalStateException when redis-server is not installed or does not start
     */
    public synchronized LocalRedis redis() {
        if (redis == null) {
            redis = LocalRedis.start();
        }
        return redis;
    }

    @Override
    public synchronized void close() {
        if (redis != null) {
            redis.close();
            redis = null;
        }
    }
}
