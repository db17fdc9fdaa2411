package io.sluice.internal;

import io.sluice.AlgorithmName;
import io.sluice.CalendarWindow;
import io.sluice.Concurrency;
import io.sluice.FixedWindow;
import io.sluice.Gcra;
import io.sluice.LeakyBucket;
import io.sluice.Limit;
import io.sluice.RefreshPeriod;
import io.sluice.RollingWindow;
import io.sluice.Rule;
import io.sluice.SlidingLog;
import io.sluice.SlidingWindow;
import io.sluice.SmoothBursty;
import io.sluice.SmoothWarmingUp;
import io.sluice.TokenBucket;
import java.util.ArrayList;
import java.util.List;

/**
 * A share of a limit, for {@link io.sluice.FailurePolicy#localFallback(double)}: the counts and rates that bound
 * admissions are multiplied by the share and rounded down; windows, periods and options are unchanged, so the
 * scaled limit admits at most {@code share} of what the original admits over any interval.
 */
public final class LimitShares {

    private LimitShares() {}

    /** The rule with every limit scaled by {@code share}. */
    public static Rule scale(Rule rule, double share) {
        List<Limit> scaled = new ArrayList<>(rule.limits().size());
        for (Limit limit : rule.limits()) {
            scaled.add(scale(rule.name(), limit, share));
        }
        return Rule.of(rule.name(), scaled).withShadow(rule.shadow().toArray(String[]::new))
                .withLockout(rule.lockout());
    }

    /**
     * {@code limit} scaled by {@code share}.
     *
     * @throws IllegalArgumentException when the share leaves the limit with less than one permit
     */
    public static Limit scale(String rule, Limit limit, double share) {
        if (share == 1.0) {
            return limit;
        }
        // A switch expression over the enum: a new AlgorithmName constant fails compilation here until it says
        // how its limit scales.
        return switch (AlgorithmName.of(limit)) {
            case FIXED_WINDOW -> {
                FixedWindow l = (FixedWindow) limit;
                yield l.withLimit(count(rule, l, "limit", l.limit(), share));
            }
            case SLIDING_LOG -> {
                SlidingLog l = (SlidingLog) limit;
                yield l.withLimit(count(rule, l, "limit", l.limit(), share));
            }
            case SLIDING_WINDOW -> {
                SlidingWindow l = (SlidingWindow) limit;
                yield l.withLimit(count(rule, l, "limit", l.limit(), share));
            }
            case ROLLING_WINDOW -> {
                RollingWindow l = (RollingWindow) limit;
                yield l.withLimit(count(rule, l, "limit", l.limit(), share));
            }
            case TOKEN_BUCKET -> {
                TokenBucket l = (TokenBucket) limit;
                long capacity = count(rule, l, "capacity", l.capacity(), share);
                long initial = Math.min(capacity, (long) Math.floor(l.initialTokens() * share));
                yield new TokenBucket(l.name(), capacity, count(rule, l, "refill_tokens", l.refillTokens(), share),
                        l.refillPeriod(), l.refill(), initial);
            }
            case GCRA -> {
                Gcra l = (Gcra) limit;
                yield new Gcra(l.name(), count(rule, l, "limit", l.limit(), share), l.period(),
                        count(rule, l, "burst", l.burst(), share));
            }
            case LEAKY_BUCKET -> {
                LeakyBucket l = (LeakyBucket) limit;
                long burst = (long) Math.floor(l.burst() * share);
                yield new LeakyBucket(l.name(), count(rule, l, "limit", l.limit(), share), l.period(), burst,
                        l.nodelay(), Math.min(burst, (long) Math.floor(l.delay() * share)));
            }
            case SMOOTH_BURSTY -> {
                SmoothBursty l = (SmoothBursty) limit;
                yield l.withPermitsPerSecond(l.permitsPerSecond() * share);
            }
            case SMOOTH_WARMING_UP -> {
                SmoothWarmingUp l = (SmoothWarmingUp) limit;
                yield l.withPermitsPerSecond(l.permitsPerSecond() * share);
            }
            case REFRESH_PERIOD -> {
                RefreshPeriod l = (RefreshPeriod) limit;
                yield l.withLimitForPeriod(count(rule, l, "limit_for_period", l.limitForPeriod(), share));
            }
            case CONCURRENCY -> {
                Concurrency l = (Concurrency) limit;
                yield l.withMaxConcurrent(count(rule, l, "max_concurrent", l.maxConcurrent(), share));
            }
            case CALENDAR_WINDOW -> {
                CalendarWindow l = (CalendarWindow) limit;
                yield l.withLimit(count(rule, l, "limit", l.limit(), share));
            }
        };
    }

    private static long count(String rule, Limit limit, String field, long value, double share) {
        long scaled = (long) Math.floor(value * share);
        if (scaled < 1) {
            throw new IllegalArgumentException("fallback_share " + share + " leaves limit '" + limit.name()
                    + "' of rule '" + rule + "' with " + field + "=" + scaled + " (from " + value
                    + "); expected a share of at least 1/" + value);
        }
        return scaled;
    }
}
