package io.sluice.redis.internal;

import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.Gcra;
import io.sluice.Limit;
import io.sluice.Mode;
import io.sluice.RefreshPeriod;
import io.sluice.RollingWindow;
import io.sluice.Rule;
import io.sluice.SlidingLog;
import io.sluice.SlidingWindow;
import io.sluice.TokenBucket;
import io.sluice.internal.algorithm.Arith;
import java.util.ArrayList;
import java.util.List;

/**
 * What a lease of one leased-mode rule may be: how many permits one lease may take and how long its permits
 * may be spent after the lease call was sent. Immutable; built once per rule (version) by {@link LeasedMode}.
 *
 * <h2>Lifetime: why permits may not outlive their window</h2>
 *
 * A lease charges Redis at the moment of the call and the node spends the permits later. For most algorithms
 * that lag is the only difference from exact mode (see {@link LeasedMode}). For {@code fixed_window} and
 * {@code refresh_period} it would be more: their state forgets what was charged at the end of a window (cycle),
 * and the next window hands out its full limit again. A permit charged in window k and spent in window k + 1
 * would come on top of the limit of window k + 1. So a lease of a rule with such a limit lives at most until
 * the end of the window (cycle) it was charged in, which the plan derives from the lease call's reply:
 *
 * <ul>
 *   <li><b>One limit</b> ({@link Bound#RESET_AFTER}): the reply's {@code resetAfter} is that limit's. For
 *       {@code fixed_window} it is {@code windowEnd − now} whenever the window's count is above zero, which it
 *       is after any grant ({@code FixedWindowAlgorithm}: "resetAfter = windowEnd − now while the counter is
 *       non-zero"). For {@code refresh_period} it is the time until a refresh brings the permits back to
 *       {@code limitForPeriod}: after a grant of at least one permit the cycle had permits (grantable is 0 with
 *       a debt), so what is left is in [0, L) and one refresh, at the start of the next cycle, fills it: the
 *       end of the current cycle ({@code RefreshPeriodAlgorithm.resetAfter}, {@code cycles = 1}). Either way
 *       it is counted from the moment the script ran, which is after the local moment the call was sent, so
 *       {@code sentAt + resetAfter} is never later than the end of the window, whatever the offset between
 *       this host's clock and Redis's.
 *   <li><b>Several limits, client time, every windowed limit an epoch-aligned {@code fixed_window}</b>
 *       ({@link Bound#EPOCH_WINDOWS}): the reply's {@code resetAfter} is the largest of the limits', so it
 *       says nothing about a shorter window; but the store sent its own clock's {@code now}, so each window's
 *       end is {@code now − now mod W + W}, exactly as the script computes it.
 *   <li><b>Otherwise</b> (several limits, and a {@code fixed_window} aligned to the first request, a
 *       {@code refresh_period}, or an epoch-aligned window under Redis server time) the end of the window is
 *       not known to this node: such a rule is not leased ({@link Bound#NONE}) and {@link LeasedMode} leaves its
 *       requests to exact mode, one script call each, which keeps the guarantee.
 *   <li>Rules without a windowed limit ({@link Bound#TTL}) lease for the TTL.
 * </ul>
 *
 * Every lease lives at most {@link Mode#leaseTtl()} as well.
 *
 * <h2>Batch cap: the "limit count"</h2>
 *
 * {@link Mode#maxBatch()} when set; when 0 (automatic), a sixteenth of the smallest limit count of the rule, at
 * least 1, where the limit count is what one key can hold at once: the {@code limit} of {@code fixed_window},
 * {@code sliding_log}, {@code sliding_window} and {@code rolling_window}, the {@code capacity} of
 * {@code token_bucket}, the {@code burst} of {@code gcra} and the {@code limitForPeriod} of
 * {@code refresh_period}. So with the automatic cap sixteen nodes' leases together hold at most one limit's
 * worth of permits.
 */
final class LeasePlan {

    /** How a lease's lifetime is bounded besides the TTL. */
    enum Bound {
        /** No windowed limit: the TTL alone. */
        TTL,
        /** One windowed limit: the reply's resetAfter is the end of its window (cycle). */
        RESET_AFTER,
        /** Client time, and every windowed limit is an epoch-aligned fixed window: computed from the time sent. */
        EPOCH_WINDOWS,
        /** The end of a window cannot be known here: the rule is decided exactly. */
        NONE
    }

    private static final long AUTOMATIC_BATCH_DIVISOR = 16;
    /**
     * Under Redis server time the window's end is measured on Redis's clock and the lease's on this host's:
     * NTP slews a clock by at most 500 ppm, so this host's clock may run that much slower than Redis's. A
     * window bound shortened by 1/1000 (twice that) still ends first.
     */
    private static final long CLOCK_RATE_MARGIN = 1000;

    private final Rule rule;
    private final long ttlMicros;
    private final long maxBatch;
    private final Bound bound;
    private final long[] epochWindows;
    private final String notLeasedBecause;
    private final boolean clientTime;

    private LeasePlan(Rule rule, boolean clientTime, long ttlMicros, long maxBatch, Bound bound, long[] epochWindows,
                      String notLeasedBecause) {
        this.rule = rule;
        this.clientTime = clientTime;
        this.ttlMicros = ttlMicros;
        this.maxBatch = maxBatch;
        this.bound = bound;
        this.epochWindows = epochWindows;
        this.notLeasedBecause = notLeasedBecause;
    }

    /**
     * The plan of a leased-mode rule.
     *
     * @param clientTime whether the store decides with its own clock (so the time of each call is known)
     * @throws IllegalArgumentException when the rule is not in leased mode or holds a limit that cannot be leased
     */
    static LeasePlan of(Rule rule, boolean clientTime) {
        Mode mode = rule.mode();
        if (mode.kind() != Mode.Kind.LEASED) {
            throw new IllegalArgumentException("rule '" + rule.name() + "' must be in mode leased, was " + mode.name());
        }
        long smallest = Long.MAX_VALUE;
        List<Limit> windowed = new ArrayList<>();
        for (Limit limit : rule.limits()) {
            smallest = Math.min(smallest, limitCount(limit));
            if (limit instanceof FixedWindow || limit instanceof RefreshPeriod) {
                windowed.add(limit);
            }
        }
        long maxBatch = mode.maxBatch() > 0 ? mode.maxBatch() : Math.max(1, smallest / AUTOMATIC_BATCH_DIVISOR);
        long ttl = Arith.micros(mode.leaseTtl());
        if (windowed.isEmpty()) {
            return new LeasePlan(rule, clientTime, ttl, maxBatch, Bound.TTL, null, null);
        }
        if (rule.limits().size() == 1) {
            return new LeasePlan(rule, clientTime, ttl, maxBatch, Bound.RESET_AFTER, null, null);
        }
        boolean allEpoch = windowed.stream().allMatch(l -> l instanceof FixedWindow f
                && f.align() == FixedWindow.Align.EPOCH);
        if (clientTime && allEpoch) {
            long[] windows = windowed.stream().mapToLong(l -> Arith.micros(((FixedWindow) l).window())).toArray();
            return new LeasePlan(rule, clientTime, ttl, maxBatch, Bound.EPOCH_WINDOWS, windows, null);
        }
        String why = "limit '" + windowed.get(0).name() + "' (" + windowed.get(0).algorithm() + ") forgets its "
                + "charges at the end of a window this node cannot see in a rule of several limits ("
                + (allEpoch ? "the store uses Redis server time; give it a clock to lease epoch-aligned windows"
                : "its windows start at the key's first request") + ")";
        return new LeasePlan(rule, clientTime, ttl, maxBatch, Bound.NONE, null, why);
    }

    /**
     * What one key can hold at once under {@code limit}: the limit of the window algorithms, a token bucket's
     * capacity, GCRA's burst, refresh_period's limit per cycle.
     *
     * @throws IllegalArgumentException for an algorithm leased mode does not support
     */
    static long limitCount(Limit limit) {
        if (limit instanceof FixedWindow l) {
            return l.limit();
        }
        if (limit instanceof SlidingLog l) {
            return l.limit();
        }
        if (limit instanceof SlidingWindow l) {
            return l.limit();
        }
        if (limit instanceof RollingWindow l) {
            return l.limit();
        }
        if (limit instanceof TokenBucket l) {
            return l.capacity();
        }
        if (limit instanceof Gcra l) {
            return l.burst();
        }
        if (limit instanceof RefreshPeriod l) {
            return l.limitForPeriod();
        }
        throw new IllegalArgumentException("limit '" + limit.name() + "' (" + limit.algorithm()
                + ") cannot be leased; leased mode supports " + Mode.LEASABLE.stream().sorted().toList());
    }

    Rule rule() {
        return rule;
    }

    /** Whether requests of the rule are leased; false sends them to exact mode (see {@link #notLeasedBecause}). */
    boolean leased() {
        return bound != Bound.NONE;
    }

    /** Why the rule is not leased, or null when it is. */
    String notLeasedBecause() {
        return notLeasedBecause;
    }

    Bound bound() {
        return bound;
    }

    long ttlMicros() {
        return ttlMicros;
    }

    /** The most permits one lease takes, unless a single request needs more. */
    long maxBatch() {
        return maxBatch;
    }

    /**
     * How long after the call was sent the permits of a lease may be spent: the TTL, shortened to the end of
     * the window (cycle) the permits were charged in when the rule has a windowed limit.
     *
     * @param reply  the lease call's decision (one that granted permits)
     * @param sentAt the client time the call was decided at (only read for {@link Bound#EPOCH_WINDOWS})
     */
    long lifetime(Decision reply, long sentAt) {
        return switch (bound) {
            case TTL -> ttlMicros;
            case RESET_AFTER -> Math.min(ttlMicros, clientTime ? reply.resetAfterMicros()
                    : reply.resetAfterMicros() - reply.resetAfterMicros() / CLOCK_RATE_MARGIN);
            case EPOCH_WINDOWS -> {
                long life = ttlMicros;
                for (long w : epochWindows) {
                    life = Math.min(life, w - sentAt % w);
                }
                yield life;
            }
            case NONE -> 0;
        };
    }
}
