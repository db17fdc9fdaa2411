package io.sluice.redis.fleet;

import io.sluice.FixedWindow;
import io.sluice.Gcra;
import io.sluice.Limit;
import io.sluice.Mode;
import io.sluice.Rule;
import io.sluice.TokenBucket;
import io.sluice.internal.algorithm.Arith;
import java.time.Duration;
import java.util.List;

/**
 * Rules {@link LeasedFleetIT} hammers in {@link Mode#leased() leased mode} whose limits come back during a run
 * (unlike {@link FleetCase}'s, which never refill within one): windows that end, buckets that refill, a meter
 * that drains. Each knows how many permits it allows over a span of server time, so the fleet's total can be
 * held to it, and how many attempts a process makes at least.
 */
enum LeasedFleetCase {

    /**
     * 2,000 per 100 ms window, under a load that alternates ({@link #alternating}): odd windows are hammered far
     * beyond the limit, even windows see one attempt per 2 ms per process, so nodes end them holding leased
     * permits. Spent in the next, hammered window, those would come on top of its full limit: leases must end
     * with their window.
     */
    FIXED_WINDOW_ALTERNATING(Long.MAX_VALUE, Span.REFILL_MILLIS, FixedWindow.of(2_000, Duration.ofMillis(100))),
    /** Capacity 1,000, refilled at 20,000 per second. */
    TOKEN_BUCKET_REFILL(Long.MAX_VALUE, Span.REFILL_MILLIS, TokenBucket.of(1_000, 20_000, Duration.ofSeconds(1))),
    /** 20,000 per second with a burst of 1,000. */
    GCRA_REFILL(Long.MAX_VALUE, Span.REFILL_MILLIS, Gcra.of(20_000, Duration.ofSeconds(1)).withBurst(1_000)),
    /** A limit no fleet reaches: every attempt is admitted, the key as hot as the processes can make it. */
    HOT(500_000, 0, FixedWindow.of(Limit.MAX_COUNT, Duration.ofDays(366)));

    private final long minAttempts;
    private final long runMillis;
    private final List<Limit> limits;

    LeasedFleetCase(long minAttempts, long runMillis, Limit... limits) {
        this.minAttempts = minAttempts;
        this.runMillis = runMillis;
        this.limits = List.of(limits);
    }

    /** The rule in exact mode, named after the case; the fleet adds the mode. */
    Rule rule() {
        return Rule.of("leased_" + name().toLowerCase(java.util.Locale.ROOT), limits);
    }

    /** Whether the load alternates between hammered (odd) and light (even) windows of the fixed window. */
    boolean alternating() {
        return this == FIXED_WINDOW_ALTERNATING;
    }

    /**
     * Attempts each process makes at least (within the worker's time bounds): {@link Long#MAX_VALUE} keeps the
     * refilling cases running for all of {@link #runMillis}, so windows end and buckets refill many times.
     */
    long minAttempts() {
        return minAttempts;
    }

    /** How long a run lasts at most, in milliseconds (0: the worker's own ceiling). */
    long runMillis() {
        return runMillis;
    }

    /**
     * The most the rule admits over a run on a fresh key that started at {@code fromMicros} and ended by
     * {@code toMicros} of server time: per window touched for the fixed window, the capacity (burst) plus the
     * refill over the span for the bucket and the meter.
     */
    long allowed(long fromMicros, long toMicros) {
        Limit limit = limits.get(0);
        long span = toMicros - fromMicros;
        if (limit instanceof FixedWindow f) {
            long w = Arith.micros(f.window());
            return Arith.mulSat(f.limit(), toMicros / w - fromMicros / w + 1);
        }
        if (limit instanceof TokenBucket b) {
            return b.capacity() + Arith.mulDivCeil(b.refillTokens(), span, Arith.micros(b.refillPeriod()));
        }
        if (limit instanceof Gcra g) {
            return g.burst() + Arith.mulDivCeil(g.limit(), span, Arith.micros(g.period()));
        }
        throw new IllegalStateException("no bound for " + limit);
    }

    /** The span of the refilling runs, in a holder: enum constants cannot use the enum's own static fields. */
    private static final class Span {
        /**
         * How long the refilling cases run, by the wall clock of each process: 30 windows of the fixed window
         * (15 of them hammered), 60 bucket capacities of refill for the bucket and the meter. A longer run
         * repeats the same window ends and refills and adds nothing the assertions could catch (it used to be
         * the worker's 30 s ceiling, which made these three runs most of sluice-redis's test time).
         */
        static final long REFILL_MILLIS = 3_000;
    }
}
