package io.sluice.internal.algorithm;

import io.sluice.Concurrency;
import io.sluice.FixedWindow;
import io.sluice.Gcra;
import io.sluice.LeakyBucket;
import io.sluice.Limit;
import io.sluice.RefreshPeriod;
import io.sluice.RollingWindow;
import io.sluice.SlidingLog;
import io.sluice.SlidingWindow;
import io.sluice.SmoothBursty;
import io.sluice.SmoothWarmingUp;
import io.sluice.TokenBucket;

/** Maps each limit type to its transition. */
public final class Algorithms {
    private Algorithms() {}

    /** The transition enforcing {@code limit}. */
    @SuppressWarnings("unchecked")
    public static Algorithm<Object> of(Limit limit) {
        Algorithm<?> a;
        if (limit instanceof FixedWindow l) {
            a = new FixedWindowAlgorithm(l);
        } else if (limit instanceof SlidingLog l) {
            a = new SlidingLogAlgorithm(l);
        } else if (limit instanceof SlidingWindow l) {
            a = new SlidingWindowAlgorithm(l);
        } else if (limit instanceof RollingWindow l) {
            a = new RollingWindowAlgorithm(l);
        } else if (limit instanceof TokenBucket l) {
            a = new TokenBucketAlgorithm(l);
        } else if (limit instanceof Gcra l) {
            a = new GcraAlgorithm(l);
        } else if (limit instanceof LeakyBucket l) {
            a = new LeakyBucketAlgorithm(l);
        } else if (limit instanceof SmoothBursty l) {
            a = new SmoothBurstyAlgorithm(l);
        } else if (limit instanceof SmoothWarmingUp l) {
            a = new SmoothWarmingUpAlgorithm(l);
        } else if (limit instanceof RefreshPeriod l) {
            a = new RefreshPeriodAlgorithm(l);
        } else if (limit instanceof Concurrency l) {
            a = new ConcurrencyAlgorithm(l);
        } else {
            throw new IllegalArgumentException("limit must be one of Sluice's limit types, was "
                    + (limit == null ? "null" : limit.getClass().getName()));
        }
        return (Algorithm<Object>) a;
    }
}
