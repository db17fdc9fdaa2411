package io.sluice.internal.algorithm;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.CalendarWindow;
import io.sluice.FixedWindow;
import io.sluice.Gcra;
import io.sluice.LeakyBucket;
import io.sluice.Limit;
import io.sluice.RollingWindow;
import io.sluice.SlidingLog;
import io.sluice.SlidingWindow;
import io.sluice.TokenBucket;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongBinaryOperator;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;

/**
 * Refunds never let a limit admit more than its bound over any window (issue 16, "counting refunds"): random runs
 * of tries, estimated charges and settlements (refunds, extra charges, settlements long after the charge) on
 * each algorithm that can settle, with the permits each admission really used counted at its time (a try's
 * permits; a charge's final cost when refunded, its estimate otherwise: an extra charge is a debt, not an
 * admission). Each algorithm's own bound applies to those uses, the one its properties test proves for tries.
 */
class SettlePropertiesTest {

    /** One operation: advance the clock, then try {@code permits}, charge them as an estimate, or settle one. */
    record Op(long advance, int kind, long permits, int ticket, long actualPercent) {}

    private record Open(long at, long estimate, long mark) {}

    @Provide
    Arbitrary<List<Op>> ops() {
        Arbitrary<Long> advance = Arbitraries.frequencyOf(
                Tuple.of(3, Arbitraries.just(0L)),
                Tuple.of(5, Arbitraries.longs().between(1, 300_000)),
                Tuple.of(2, Arbitraries.longs().between(1, 3_000_000)));
        return Combinators.combine(advance, Arbitraries.integers().between(0, 2), Arbitraries.longs().between(1, 4),
                        Arbitraries.integers().between(0, 7), Arbitraries.longs().between(0, 200))
                .as(Op::new).list().ofMaxSize(80);
    }

    /**
     * Runs {@code ops} on {@code limit}'s transition as a store with one limit would, checks every state it
     * writes decides without error, and asserts the uses' bound.
     */
    @SuppressWarnings("unchecked")
    private static void run(Limit limit, List<Op> ops, long maxPermits, LongBinaryOperator bound) {
        Algorithm<Object> algorithm = Algorithms.of(limit);
        Settleable<Object> settling = (Settleable<Object>) algorithm;
        Object state = null;
        long now = 1_700_000_000_000_000L;
        List<Open> open = new ArrayList<>();
        List<BucketRun.Use> uses = new ArrayList<>();
        List<Long> usePermits = new ArrayList<>();
        for (Op op : ops) {
            now += op.advance();
            Object live = state != null && now >= algorithm.expiresAt(state) ? null : state;
            long permits = Math.min(op.permits(), maxPermits);
            if (op.kind() == 2 && !open.isEmpty()) {
                Open t = open.remove(op.ticket() % open.size());
                long actual = t.estimate() * op.actualPercent() / 100;
                state = settling.settle(live, now, t.mark(), t.estimate(), actual);
                int i = indexOfUse(uses, t.at(), t.estimate());
                if (actual < t.estimate()) {
                    uses.set(i, new BucketRun.Use(t.at(), actual));
                }
                algorithm.step(state, now, 1, 0);   // a settled state is one the algorithm decides on
                continue;
            }
            Step<Object> step = algorithm.step(live, now, permits, 0);
            if (step.allowed()) {
                state = step.admitted();
                uses.add(new BucketRun.Use(now, permits));
                if (op.kind() == 1) {
                    open.add(new Open(now, permits, settling.mark(step.admitted(), now)));
                }
            } else {
                state = step.rejected();
            }
        }
        BucketRun.assertWindows(uses.stream().filter(u -> u.permits() > 0).toList(), bound);
    }

    /** The last use at {@code at} of {@code permits} not yet settled (uses are never removed, only lowered). */
    private static int indexOfUse(List<BucketRun.Use> uses, long at, long permits) {
        for (int i = uses.size() - 1; i >= 0; i--) {
            if (uses.get(i).at() == at && uses.get(i).permits() == permits) {
                return i;
            }
        }
        throw new AssertionError("no use at " + at);
    }

    private static LongBinaryOperator sameAlignedWindow(long limit, long window) {
        return (x, y) -> Math.floorDiv(x, window) == Math.floorDiv(y, window) ? limit : Long.MAX_VALUE;
    }

    @Property(tries = 300)
    void fixedWindow(@ForAll("ops") List<Op> ops) {
        run(FixedWindow.of(5, Duration.ofSeconds(1)), ops, 5, sameAlignedWindow(5, 1_000_000));
    }

    @Property(tries = 300)
    void calendarWindow(@ForAll("ops") List<Op> ops) {
        run(CalendarWindow.of(6, CalendarWindow.Period.MINUTE, ZoneOffset.UTC), ops, 6,
                sameAlignedWindow(6, 60_000_000));
    }

    @Property(tries = 300)
    void slidingWindow(@ForAll("ops") List<Op> ops) {
        run(SlidingWindow.of(5, Duration.ofSeconds(1)), ops, 5, sameAlignedWindow(5, 1_000_000));
    }

    @Property(tries = 300)
    void slidingLog(@ForAll("ops") List<Op> ops) {
        run(SlidingLog.of(5, Duration.ofSeconds(1)), ops, 5, (x, y) -> y - x < 1_000_000 ? 5 : Long.MAX_VALUE);
    }

    @Property(tries = 300)
    void rollingWindow(@ForAll("ops") List<Op> ops) {
        run(RollingWindow.of(5, Duration.ofSeconds(1), Duration.ofMillis(200)), ops, 5,
                (x, y) -> y - x <= 800_000 ? 5 : Long.MAX_VALUE);
    }

    /**
     * token_bucket with gcra's refund clock (TokenBucketAlgorithm's settlement). Before the clock it could pass
     * the bound after another ticket's refund: {@link #tokenBucketTwoRefundsAroundAFullBucket}.
     */
    @Property(tries = 3000)
    void tokenBucket(@ForAll("ops") List<Op> ops) {
        run(TokenBucket.of(5, 2, Duration.ofSeconds(1)), ops, 5,
                (x, y) -> 5 + Arith.mulDivCeil(2, y - x, 1_000_000));
    }

    /** GREEDY with a rate whose token takes a fraction of a µs to refill: 3 a second, a = 3, b = 10^6. */
    @Property(tries = 2000)
    void tokenBucketWithFractionalTokens(@ForAll("ops") List<Op> ops) {
        run(TokenBucket.of(4, 3, Duration.ofSeconds(1)), ops, 4,
                (x, y) -> 4 + Arith.mulDivCeil(3, y - x, 1_000_000));
    }

    @Property(tries = 2000)
    void tokenBucketInterval(@ForAll("ops") List<Op> ops, @ForAll boolean aligned) {
        TokenBucket limit = TokenBucket.of(5, 2, Duration.ofSeconds(1))
                .withRefill(aligned ? TokenBucket.Refill.INTERVAL_ALIGNED : TokenBucket.Refill.INTERVAL);
        run(limit, ops, 5, (x, y) -> 5 + 2 * Arith.ceilDiv(y - x, 1_000_000));
    }

    /**
     * The run that refused token_bucket: capacity 5, 2 a second; at 0 s try 3, charge 1, charge 1; refund the
     * first; at 2 s try 5; refund the second; try 1. The stale mark put a token back and 6 passed at 2 s.
     */
    @Example
    void tokenBucketTwoRefundsAroundAFullBucket() {
        tokenBucket(List.of(new Op(0, 0, 3, 0, 0), new Op(0, 1, 1, 0, 0), new Op(0, 1, 1, 0, 0),
                new Op(0, 2, 1, 0, 0), new Op(2_000_000, 0, 5, 0, 0), new Op(0, 2, 1, 0, 0), new Op(0, 0, 1, 0, 0)));
    }

    /**
     * gcra with its refund clock (GcraAlgorithm's settlement). Before the clock, this property found a run using 4
     * where the bound is 3 (seed -6632383891874789002, kept below as a fixed run, and the run itself as
     * {@link #gcraTwoRefundsAroundAnIdleInstant}).
     */
    @Property(tries = 3000)
    void gcra(@ForAll("ops") List<Op> ops) {
        Gcra limit = Gcra.of(4, Duration.ofSeconds(1)).withBurst(3);
        long interval = 250_000;
        run(limit, ops, 3, (x, y) -> 3 + (y - x) / interval);
    }

    @Property(tries = 300, seed = "-6632383891874789002")
    void gcraAtTheSeedThatFoundTheStaleMark(@ForAll("ops") List<Op> ops) {
        gcra(ops);
    }

    /** An emission interval that does not divide the period (T = 333,334 µs) and a burst of 2. */
    @Property(tries = 2000)
    void gcraWithARoundedInterval(@ForAll("ops") List<Op> ops) {
        Gcra limit = Gcra.of(3, Duration.ofSeconds(1)).withBurst(2);
        long interval = 333_334;
        run(limit, ops, 2, (x, y) -> 2 + (y - x) / interval);
    }

    /**
     * The run that refused gcra: burst 3, T = 250 ms; at 0 try 1, charge 1, charge 1; refund the first fully; at
     * 266.318 ms try 1; refund the second fully; then 3 tries at once and 1 at 500 ms. The stale mark gave back
     * 250 ms and let the try at 500 ms pass too, 4 uses in [266.318, 500] ms; the refund clock gives back 233.682
     * ms of the second charge (GcraSettleTest follows the TAT), and that try is refused.
     */
    @Example
    void gcraTwoRefundsAroundAnIdleInstant() {
        List<Op> ops = List.of(new Op(0, 0, 1, 0, 0), new Op(0, 1, 1, 0, 0), new Op(0, 1, 1, 0, 0),
                new Op(0, 2, 1, 0, 0), new Op(266_318, 0, 1, 0, 0), new Op(0, 2, 1, 0, 0),
                new Op(0, 0, 1, 0, 0), new Op(0, 0, 1, 0, 0), new Op(0, 0, 1, 0, 0), new Op(233_682, 0, 1, 0, 0));
        gcra(ops);
    }

    /**
     * One-permit requests, for which the leaky bucket's proved bound is burst + 1 + floor((y − x)·rate). Disabled:
     * it found a run using 6 where the bound is 5, so leaky_bucket refuses tickets (Settling) until fixed.
     */
    @net.jqwik.api.Disabled("a refund can pass the bound by one permit; leaky_bucket refuses tickets until fixed")
    @Property(tries = 300)
    void leakyBucket(@ForAll("ops") List<Op> ops) {
        LeakyBucket limit = LeakyBucket.of(4, Duration.ofSeconds(1)).withBurst(3).withNodelay(true);
        run(limit, ops, 1, (x, y) -> 3 + 1 + Arith.mulDivFloor(y - x, 4, 1_000_000));
    }
}
