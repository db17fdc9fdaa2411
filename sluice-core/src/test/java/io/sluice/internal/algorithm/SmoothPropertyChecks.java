package io.sluice.internal.algorithm;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Tuple;

/** Shared checks of the smooth_* properties tests: a random request sequence run with the store's commit rule. */
final class SmoothPropertyChecks {

    /**
     * One request: time advance and patience in stable intervals (patience < 0: unbounded, 0: none), and
     * permits.
     */
    record Op(double advanceIntervals, long permits, double patienceIntervals) {}

    /** An admitted request: when its permits are usable, how many, and the stored permits it found. */
    record Grant(long usable, long permits, double storedBefore) {}

    /** What a run leaves: the admitted requests, the key's state and the time. */
    record Run(List<Grant> grants, SmoothAlgorithm.State state, long now) {}

    private SmoothPropertyChecks() {}

    static Arbitrary<Double> rates() {
        return Arbitraries.oneOf(
                Arbitraries.of(0.5, 1.0, 2.0, 3.0, 5.0, 7.5, 333.3, 666_666.0, 1_000_000.0),
                Arbitraries.doubles().between(0.01, 1_000_000.0));
    }

    static Arbitrary<List<Op>> ops(long maxPermits) {
        return ops(maxPermits, 0.0);
    }

    /** Requests whose clock may also jump back by up to {@code maxBackIntervals}. */
    static Arbitrary<List<Op>> ops(long maxPermits, double maxBackIntervals) {
        Arbitrary<Double> advance = Arbitraries.frequencyOf(
                Tuple.of(2, Arbitraries.just(0.0)),
                Tuple.of(maxBackIntervals > 0 ? 2 : 0, Arbitraries.doubles().between(-maxBackIntervals, 0.0)),
                Tuple.of(6, Arbitraries.doubles().between(0.0, 3.0)),
                Tuple.of(1, Arbitraries.doubles().between(3.0, 40.0)));
        Arbitrary<Long> permits = Arbitraries.frequencyOf(
                Tuple.of(1, Arbitraries.just(0L)),
                Tuple.of(6, Arbitraries.longs().between(1, 5)),
                Tuple.of(2, Arbitraries.longs().between(1, maxPermits)));
        Arbitrary<Double> patience = Arbitraries.oneOf(Arbitraries.just(0.0), Arbitraries.just(-1.0),
                Arbitraries.doubles().between(0.0, 4.0));
        return Combinators.combine(advance, permits, patience).as(Op::new).list().ofMinSize(1).ofMaxSize(60);
    }

    static long maxWait(Op op, double interval) {
        return op.patienceIntervals() < 0 ? Long.MAX_VALUE : (long) (op.patienceIntervals() * interval);
    }

    /**
     * Runs {@code ops} from {@code start} on one key: commits admitted or rejected as a store does, checks
     * every step's own contract and the state invariants, and returns the admitted requests.
     */
    static Run run(SmoothAlgorithm algorithm, long start, List<Op> ops) {
        List<Grant> grants = new ArrayList<>();
        SmoothAlgorithm.State state = null;
        long now = start;
        long lastTicket = Long.MIN_VALUE;
        for (Op op : ops) {
            long advance = (long) (op.advanceIntervals() * algorithm.stableIntervalMicros);
            now = Math.max(0, Math.min(Arith.MAX_TIME, Arith.addSat(now, advance)));
            long maxWait = maxWait(op, algorithm.stableIntervalMicros);
            Step<SmoothAlgorithm.State> step = algorithm.step(state, now, op.permits(), maxWait);
            checkStep(algorithm, state, now, op.permits(), maxWait, step);
            if (step.allowed()) {
                if (op.permits() > 0) {
                    SmoothAlgorithm.State current = state != null ? state : algorithm.absent(now);
                    grants.add(new Grant(now + step.waitMicros(), op.permits(),
                            algorithm.resync(current, now).storedPermits()));
                }
                state = step.admitted();
            } else {
                state = step.rejected();
            }
            if (state != null) {
                assertThat(state.storedPermits()).isBetween(0.0, algorithm.maxPermits);
                assertThat(state.nextFreeTicketMicros()).isBetween(lastTicket, Arith.MAX_TIME);
                lastTicket = state.nextFreeTicketMicros();
            }
        }
        return new Run(grants, state, now);
    }

    /** The SPI contract of one step, whatever the algorithm's semantics. */
    static void checkStep(SmoothAlgorithm algorithm, SmoothAlgorithm.State state, long now, long permits,
                          long maxWait, Step<SmoothAlgorithm.State> step) {
        assertThat(step.rejected()).isSameAs(state);
        assertThat(step.remaining()).isNotNegative();
        assertThat(step.resetAfterMicros()).isNotNegative();
        assertThat(step.lease()).isEqualTo(-1);
        if (permits == 0) {
            assertThat(step.allowed()).isTrue();
            assertThat(step.admitted()).isSameAs(state);
        }
        if (step.allowed()) {
            assertThat(step.retryAfterMicros()).isZero();
            assertThat(step.waitMicros()).isBetween(0L, maxWait);
        } else {
            assertThat(step.admitted()).isNull();
            assertThat(step.waitMicros()).isZero();
            long retry = step.retryAfterMicros();
            assertThat(retry).isPositive();
            if (retry <= Arith.MAX_TIME - now) { // exact: passes as a try then, not a microsecond earlier
                assertThat(algorithm.step(state, now + retry, permits, 0).allowed()).isTrue();
                assertThat(algorithm.step(state, now + retry - 1, permits, 0).allowed()).isFalse();
            }
        }
        long grantable = algorithm.grantable(state, now, permits);
        boolean passesNow = algorithm.step(state, now, permits, 0).allowed();
        assertThat(grantable).isEqualTo(permits == 0 ? 0 : passesNow ? permits : 0);
        if (grantable == 0 && permits > 1) {
            assertThat(algorithm.step(state, now, 1, 0).allowed()).isFalse();
        }
    }

    /**
     * The rate bound of the essay: for admitted requests i < j (in usable order), the permits of i .. j-1
     * are at most storedAtI (if counted) + (u_j - u_i + slack * (j - i)) / stableInterval.
     */
    static void checkRate(List<Grant> grants, double interval, boolean countStored, int slackPerRequest) {
        for (int i = 0; i < grants.size(); i++) {
            double permits = 0;
            for (int j = i + 1; j < grants.size(); j++) {
                assertThat(grants.get(j).usable()).isGreaterThanOrEqualTo(grants.get(j - 1).usable());
                permits += grants.get(j - 1).permits();
                double bound = (countStored ? grants.get(i).storedBefore() : 0.0)
                        + (grants.get(j).usable() - grants.get(i).usable() + (double) slackPerRequest * (j - i))
                        / interval;
                assertThat(permits).as("permits of grants %d..%d", i, j - 1)
                        .isLessThanOrEqualTo(bound * (1 + 1e-9) + 1e-9);
            }
        }
    }
}
