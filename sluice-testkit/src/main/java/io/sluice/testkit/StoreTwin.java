package io.sluice.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Decision;
import io.sluice.Limit;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.Store;
import java.time.Duration;
import java.util.function.Function;

/**
 * One rule on two stores that share one {@link ManualClock}: a reference store (usually the in-memory store, which
 * runs the Java transitions) and a store under test (e.g. Redis, which runs the Lua ports). Every call goes to
 * both, first the reference, and asserts that they decide identically, then returns the decision, so an edge-case
 * test states its expectations once and checks the port against the Java at the same time.
 *
 * <pre>{@code
 * try (StoreTwin t = new StoreTwin(clock, rule, Store.memory().clock(clock).build(), redisStore)) {
 *     assertThat(t.tryAcquire("k", 3).remaining()).isZero();
 * }
 * }</pre>
 *
 * <p>Not thread-safe: one test drives it. {@link #close} closes both limiters and both stores.
 */
public final class StoreTwin implements AutoCloseable {

    private final ManualClock clock;
    private final Store referenceStore;
    private final Store testedStore;
    private final RateLimiter reference;
    private final RateLimiter tested;

    /**
     * @param clock     the clock both stores read (and the limiters sleep on)
     * @param reference the store whose decisions are expected
     * @param tested    the store under test
     */
    public StoreTwin(ManualClock clock, Rule rule, Store reference, Store tested) {
        this.clock = clock;
        this.referenceStore = reference;
        this.testedStore = tested;
        this.reference = RateLimiter.builder(rule).store(reference).sleeper(clock).build();
        this.tested = RateLimiter.builder(rule).store(tested).sleeper(clock).build();
    }

    /** The shared clock. */
    public ManualClock clock() {
        return clock;
    }

    /** The rule as the tested limiter holds it (after any {@link #updateLimit}). */
    public Rule rule() {
        return tested.rule();
    }

    /** The decision of {@code call} on the tested store, after checking that the reference decides the same. */
    public Decision both(Function<RateLimiter, Decision> call) {
        return same(call.apply(reference), call.apply(tested), "call");
    }

    public Decision tryAcquire(String key, long permits) {
        return same(reference.tryAcquire(key, permits), tested.tryAcquire(key, permits), "tryAcquire " + permits);
    }

    public Decision tryAcquireAtMost(String key, long permits) {
        return same(reference.tryAcquireAtMost(key, permits), tested.tryAcquireAtMost(key, permits),
                "tryAcquireAtMost " + permits);
    }

    public Decision reserve(String key, long permits, Duration maxWait) {
        return same(reference.reserve(key, permits, maxWait), tested.reserve(key, permits, maxWait),
                "reserve " + permits + " within " + maxWait);
    }

    public Decision peek(String key, long permits) {
        return same(reference.peek(key, permits), tested.peek(key, permits), "peek " + permits);
    }

    /** Returns a lease on both; asserts that both answer alike. */
    public boolean release(String key, long lease) {
        boolean expected = reference.release(key, lease);
        assertThat(tested.release(key, lease)).as("release %d of %s at t=%d (reference, then tested)", lease, key,
                clock.nowMicros()).isEqualTo(expected);
        return expected;
    }

    public void updateLimit(Limit limit) {
        reference.updateLimit(limit);
        tested.updateLimit(limit);
    }

    public void reset(String key) {
        reference.reset(key);
        tested.reset(key);
    }

    private Decision same(Decision expected, Decision actual, String what) {
        assertThat(actual).as(what + " at t=" + clock.nowMicros() + " (reference, then tested)").isEqualTo(expected);
        return actual;
    }

    @Override
    public void close() {
        reference.close();
        tested.close();
        referenceStore.close();
        testedStore.close();
    }
}
