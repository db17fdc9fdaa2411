package io.sluice.testkit;

import io.sluice.Store;
import java.util.Random;

/**
 * One seeded run of an equivalence test: random scenarios decided by a store under test (e.g. Redis, running the
 * Lua ports) and by the in-memory store (the Java transitions), on one {@link ManualClock}, compared step by step.
 * The run owns what every such test shares: the seed (from {@link Seeds}, so a suite run is reproducible) and the
 * one {@link Random} drawn from it, the clock, a fresh reference store per scenario, and the context that every
 * failure message starts with ({@code <label>, seed <seed>, scenario <n>}). What a scenario does is the test's
 * own: it gets an {@link EquivalenceScenario} with the tools for the steps.
 *
 * <pre>{@code
 * EquivalenceRun run = new EquivalenceRun("gcra on STANDALONE", Seeds.of("gcra on STANDALONE"));
 * try (RedisStore redis = RedisStore.builder().clock(run.clock()).build()) {
 *     run.scenarios(24, redis, scenario -> { ...; return 0; });
 * }
 * }</pre>
 *
 * <p>Not thread-safe: one test drives a run.
 */
public final class EquivalenceRun {

    /** What one scenario does; answers a count the test sums over the run (decisions, lockouts...), or 0. */
    @FunctionalInterface
    public interface Body {
        long run(EquivalenceScenario scenario) throws Exception;
    }

    private final String label;
    private final long seed;
    private final Random random;
    private final ManualClock clock = new ManualClock();

    /**
     * @param label what the run compares, first in every failure message (e.g. {@code "gcra on CLUSTER"})
     * @param seed  the seed of the run's one {@link Random}; usually {@link Seeds#of}
     */
    public EquivalenceRun(String label, long seed) {
        this.label = label;
        this.seed = seed;
        this.random = new Random(seed);
    }

    public long seed() {
        return seed;
    }

    /** The clock both stores read; the store under test must be built on it. */
    public ManualClock clock() {
        return clock;
    }

    /**
     * Runs {@code scenarios} scenarios one after the other against {@code tested}, each named {@code s<n>} with a
     * fresh in-memory reference store on the run's clock, and answers the sum of what they answer.
     *
     * <p>A fresh reference store per scenario: a scenario makes fewer decisions than the memory store's sweep
     * interval (4096), so it never sweeps. A sweep drops expired keys, which a clock stepping back would then miss,
     * while Redis keeps them until their TTL: an implementation detail of both, not a decision to compare.
     */
    public long scenarios(int scenarios, Store tested, Body body) throws Exception {
        long total = 0;
        for (int s = 0; s < scenarios; s++) {
            try (Store reference = Store.memory().clock(clock).build()) {
                total += body.run(new EquivalenceScenario(random, clock, reference, tested, "s" + s,
                        label + ", seed " + seed + ", scenario " + s));
            }
        }
        return total;
    }
}
