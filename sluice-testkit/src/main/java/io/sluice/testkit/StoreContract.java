package io.sluice.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Decision;
import io.sluice.Limit;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.SluiceListener;
import io.sluice.Store;
import java.time.Duration;
import java.util.UUID;

/**
 * The contract every {@link Store} passes, unchanged: memory, Redis (standalone and cluster), local-first and
 * remote stores extend this class and supply {@link #newStore}, and get every case in one go: the cases are grouped
 * by concern in the interfaces this class implements ({@link TogetherCases}, {@link AlgorithmCases},
 * {@link RuleCases}, {@link CallerCases}). Time is a {@link ManualClock} the store must use as its time source (a
 * Redis store in client-time mode), so every timeline is exact.
 *
 * <p>Each test uses a fresh rule name and keys, so stores may be shared between tests. A store that runs rules in
 * another mode (e.g. the Redis store's coalesced, leased or synced modes) overrides {@link #rule}, and, where its
 * mode reports remaining counts otherwise, {@link #assertAdmittedWithRemaining} with what its mode guarantees; no
 * case is skipped.
 */
public abstract class StoreContract extends StoreFixture
        implements TogetherCases, AlgorithmCases, RuleCases, CallerCases {

    @Override
    public int threads() {
        return 16;
    }

    /**
     * The rule a test runs: {@code limits} in the default (exact) mode. A store whose modes decide elsewhere
     * (coalesced, leased, synced) overrides this to run the contract in that mode.
     */
    protected Rule rule(String name, Limit... limits) {
        return Rule.of(name, limits);
    }

    @Override
    public final Rule ruleUnderTest(String name, Limit... limits) {
        return rule(name, limits);
    }

    @Override
    public final ManualClock clock() {
        return clock;
    }

    @Override
    public final Store store() {
        return store;
    }

    @Override
    public RateLimiter limiter(Limit... limits) {
        return limiterFor(rule("contract-" + UUID.randomUUID(), limits));
    }

    @Override
    public final RateLimiter limiterFor(Rule rule) {
        return limiterFor(rule, SluiceListener.NONE);
    }

    /**
     * Asserts the exact count: {@code decision.remaining() == exactRemaining}. A store running rules in a mode that
     * reports remaining otherwise overrides this with what its mode guarantees.
     */
    @Override
    public void assertAdmittedWithRemaining(Decision decision, long exactRemaining) {
        assertThat(decision.remaining()).isEqualTo(exactRemaining);
    }

    /**
     * A store timeout for contract runs against a server: the contract's decisions never depend on it, so it is
     * long enough that a loaded machine (the whole suite on two cores) never turns a slow answer into a failure.
     */
    public static final Duration PATIENT_TIMEOUT = Duration.ofSeconds(10);
}
