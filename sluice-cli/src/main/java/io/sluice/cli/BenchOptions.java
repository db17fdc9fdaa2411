package io.sluice.cli;

import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;

/**
 * What {@code sluice bench} was asked to do, as {@link BenchCommand} read it from the command line.
 *
 * @param quick      the smoke profile instead of the full one
 * @param suites     the suites to run, in running order ({@link #KNOWN_SUITES})
 * @param out        where the results go
 * @param docs       where benchmarks.md and the charts go, or null for none
 * @param reportOnly redraw the docs from {@code out} without measuring
 * @param filter     only rows whose {@code system/algorithm} matches, or null for all
 */
public record BenchOptions(boolean quick, List<String> suites, Path out, Path docs, boolean reportOnly,
                           Pattern filter) {

    /** The suites a run without {@code --suites} runs, comma-separated, in running order. */
    static final String DEFAULT_SUITES = "local,redis,redis-attack,memory,server,replay";

    /** The suites a run without {@code --suites} runs, in running order. */
    public static final List<String> ALL_SUITES = List.of(DEFAULT_SUITES.split(","));

    /**
     * Every suite {@code --suites} accepts, in running order: the default ones, then {@code attack}, which is
     * only run when named because it measures what the server withstands, not how fast it decides.
     */
    public static final List<String> KNOWN_SUITES = List.of("local", "redis", "redis-attack", "memory", "server",
            "replay", "attack");

    public BenchOptions {
        suites = List.copyOf(suites);
    }
}
