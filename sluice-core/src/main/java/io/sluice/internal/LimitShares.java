package io.sluice.internal;

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
        return Rule.of(rule.name(), scaled);
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
        if (limit instanceof FixedWindow l) {
            return l.withLimit(count(rule, l, "limit", l.limit(), share));
        } else if (limit instanceof SlidingLog l) {
            return l.withLimit(count(rule, l, "limit", l.limit(), share));
        } else if (limit instanceof SlidingWindow l) {
            return l.withLimit(count(rule, l, "limit", l.limit(), share));
        } else if (limit instanceof RollingWindow l) {
            return l.withLimit(count(rule, l, "limit", l.limit(), share));
        } else if (limit instanceof TokenBucket l) {
            long capacity = count(rule, l, "capacity", l.capacity(), share);
            long initial = Math.min(capacity, (long) Math.floor(l.initialTokens() * share));
            return new TokenBucket(l.name(), capacity, count(rule, l, "refill_tokens", l.refillTokens(), share),
                    l.refillPeriod(), l.refill(), initial);
        } else if (limit instanceof Gcra l) {
            return new Gcra(l.name(), count(rule, l, "limit", l.limit(), share), l.period(),
                    count(rule, l, "burst", l.burst(), share));
        } else if (limit instanceof LeakyBucket l) {
            long burst = (long) Math.floor(l.burst() * share);
            return new LeakyBucket(l.name(), count(rule, l, "limit", l.limit(), share), l.period(), burst,
                    l.nodelay(), Math.min(burst, (long) Math.floor(l.delay() * share)));
        } else if (limit instanceof SmoothBursty l) {
            return l.withPermitsPerSecond(l.permitsPerSecond() * share);
        } else if (limit instanceof SmoothWarmingUp l) {
            return l.withPermitsPerSecond(l.permitsPerSecond() * share);
        } else if (limit instanceof RefreshPeriod l) {
            return l.withLimitForPeriod(count(rule, l, "limit_for_period", l.limitForPeriod(), share));
        } else if (limit instanceof Concurrency l) {
            return l.withMaxConcurrent(count(rule, l, "max_concurrent", l.maxConcurrent(), share));
        }
        throw new IllegalArgumentException("limit '" + limit.name() + "' of rule '" + rule + "' is a "
                + limit.getClass().getName() + ", which Sluice does not know how to scale");
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
