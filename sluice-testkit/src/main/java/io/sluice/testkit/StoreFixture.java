package io.sluice.testkit;

import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.SluiceListener;
import io.sluice.Store;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * What the store-wide suites ({@link StoreContract}, {@link SettleContract}, {@link TierContract}) share: before
 * each test a fresh store on a fresh {@link ManualClock}; after it, every limiter opened through
 * {@link #limiterFor(Rule, SluiceListener)} and the store are closed. A subclass supplies {@link #newStore}.
 */
public abstract class StoreFixture {

    /** A store that reads time from {@code clock}. */
    protected abstract Store newStore(ManualClock clock);

    protected ManualClock clock;
    protected Store store;
    private final List<RateLimiter> limiters = new ArrayList<>();

    @BeforeEach
    void openStore() {
        clock = new ManualClock();
        store = newStore(clock);
    }

    @AfterEach
    void closeStore() {
        limiters.forEach(RateLimiter::close);
        store.close();
    }

    /** A limiter on the store for {@code rule}, on the clock, telling {@code listener}; closed after the test. */
    protected final RateLimiter limiterFor(Rule rule, SluiceListener listener) {
        RateLimiter l = RateLimiter.builder(rule).store(store).sleeper(clock).listener(listener).build();
        limiters.add(l);
        return l;
    }
}
