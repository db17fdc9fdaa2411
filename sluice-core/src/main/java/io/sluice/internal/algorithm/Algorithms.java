package io.sluice.internal.algorithm;

import io.sluice.AlgorithmName;
import io.sluice.CalendarWindow;
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

/** Maps each limit type to its transition: the in-memory store's dispatch over {@link AlgorithmName}. */
public final class Algorithms {
    private Algorithms() {}

    /** The transition enforcing {@code limit}. */
    @SuppressWarnings("unchecked")
    public static Algorithm<Object> of(Limit limit) {
        if (limit == null) {
            throw new IllegalArgumentException("limit must be one of Sluice's limit types, was null");
        }
        // A switch expression over the enum: a new AlgorithmName constant fails compilation here until it
        // has a transition.
        Algorithm<?> a = switch (AlgorithmName.of(limit)) {
            case FIXED_WINDOW -> new FixedWindowAlgorithm((FixedWindow) limit);
            case SLIDING_LOG -> new SlidingLogAlgorithm((SlidingLog) limit);
            case SLIDING_WINDOW -> new SlidingWindowAlgorithm((SlidingWindow) limit);
            case ROLLING_WINDOW -> new RollingWindowAlgorithm((RollingWindow) limit);
            case TOKEN_BUCKET -> new TokenBucketAlgorithm((TokenBucket) limit);
            case GCRA -> new GcraAlgorithm((Gcra) limit);
            case LEAKY_BUCKET -> new LeakyBucketAlgorithm((LeakyBucket) limit);
            case SMOOTH_BURSTY -> new SmoothBurstyAlgorithm((SmoothBursty) limit);
            case SMOOTH_WARMING_UP -> new SmoothWarmingUpAlgorithm((SmoothWarmingUp) limit);
            case REFRESH_PERIOD -> new RefreshPeriodAlgorithm((RefreshPeriod) limit);
            case CONCURRENCY -> new ConcurrencyAlgorithm((Concurrency) limit);
            case CALENDAR_WINDOW -> new CalendarWindowAlgorithm((CalendarWindow) limit);
        };
        return (Algorithm<Object>) a;
    }
}
