package io.sluice.internal.algorithm;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Limit;
import io.sluice.SmoothBursty;
import io.sluice.internal.algorithm.SmoothPropertyChecks.Op;
import io.sluice.internal.algorithm.SmoothPropertyChecks.Run;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.LongRange;

/** Invariants of smooth_bursty over random request sequences applied with the store's commit rule. */
class SmoothBurstyPropertiesTest {

    @Provide
    Arbitrary<SmoothBursty> limits() {
        return Combinators.combine(SmoothPropertyChecks.rates(), Arbitraries.of(0.0, 0.3, 1.0, 2.5, 10.0))
                .as((rate, burst) -> SmoothBursty.of(rate).withMaxBurstSeconds(burst));
    }

    @Provide
    Arbitrary<List<Op>> ops() {
        return SmoothPropertyChecks.ops(50);
    }

    @Provide
    Arbitrary<List<Op>> jumpingOps() {
        return SmoothPropertyChecks.ops(50, 5.0);
    }

    @Provide
    Arbitrary<List<Op>> hugeOps() {
        return SmoothPropertyChecks.ops(1L << 53);
    }

    @Provide
    Arbitrary<SmoothBursty> extremeLimits() {
        return Combinators.combine(Arbitraries.of(1.0 / 31_622_400, 1e-7, 0.01, 1.0, 999_999.9, 1_000_000.0),
                        Arbitraries.of(0.0, 1.0, 31_622_400.0))
                .as((rate, burst) -> SmoothBursty.of(rate).withMaxBurstSeconds(burst));
    }

    /**
     * Guava's promise, with its truncations made explicit: between the usable times of admitted requests
     * i and j, requests i .. j-1 got at most what i found stored (<= maxPermits) plus the rate times the
     * elapsed time plus 1 us per request. Every step honours its own contract (exact retryAfter, grantable,
     * rejected = input), stored permits stay in [0, maxPermits] and the ticket never moves back.
     */
    @Property(tries = 250)
    void savedBurstPlusRateBoundsWhatIsUsable(@ForAll("limits") SmoothBursty limit, @ForAll("ops") List<Op> ops,
                                              @ForAll @LongRange(min = 0, max = 1L << 52) long start) {
        SmoothBurstyAlgorithm algorithm = new SmoothBurstyAlgorithm(limit);
        Run run = SmoothPropertyChecks.run(algorithm, start, ops);
        SmoothPropertyChecks.checkRate(run.grants(), algorithm.stableIntervalMicros, true, 1);
        for (SmoothPropertyChecks.Grant grant : run.grants()) {
            assertThat(grant.storedBefore()).isLessThanOrEqualTo(algorithm.maxPermits);
        }
    }

    /** A clock that jumps back never yields negative waits, counts or times, nor breaks a step's contract. */
    @Property(tries = 150)
    void clockJumpingBack(@ForAll("limits") SmoothBursty limit, @ForAll("jumpingOps") List<Op> ops,
                          @ForAll @LongRange(min = 0, max = 1L << 40) long start) {
        SmoothPropertyChecks.run(new SmoothBurstyAlgorithm(limit), start, ops);
    }

    /** MAX_COUNT-sized and 2^53-sized requests near the end of the clock, at the extreme rates. */
    @Property(tries = 150)
    void noOverflowNearTheEndOfTime(@ForAll("extremeLimits") SmoothBursty limit, @ForAll("hugeOps") List<Op> ops,
                                    @ForAll @LongRange(min = Arith.MAX_TIME - 1_000_000_000L, max = Arith.MAX_TIME)
                                    long start, @ForAll @LongRange(min = 0, max = Limit.MAX_COUNT) long permits) {
        SmoothBurstyAlgorithm algorithm = new SmoothBurstyAlgorithm(limit);
        Run run = SmoothPropertyChecks.run(algorithm, start, ops);
        Step<SmoothAlgorithm.State> last = algorithm.step(run.state(), run.now(), permits, Long.MAX_VALUE);
        assertThat(last.allowed()).isTrue();
        assertThat(last.waitMicros()).isBetween(0L, Arith.MAX_TIME);
    }

    /**
     * From expiresAt on, the state decides the next request exactly like a new key (admitted, no wait); the
     * recreated key is never more permissive (it has lost the saved burst). expiresAt is the first such
     * microsecond: just before it the key is not full yet.
     */
    @Property(tries = 250)
    void expiredKeyIsNeverMorePermissive(@ForAll("limits") SmoothBursty limit, @ForAll("ops") List<Op> ops,
                                         @ForAll @LongRange(min = 0, max = 1L << 52) long start,
                                         @ForAll @LongRange(min = 0, max = 100_000_000) long extra,
                                         @ForAll @LongRange(min = 0, max = 100) long permits,
                                         @ForAll("ops") List<Op> probes) {
        SmoothBurstyAlgorithm algorithm = new SmoothBurstyAlgorithm(limit);
        SmoothAlgorithm.State state = SmoothPropertyChecks.run(algorithm, start, ops).state();
        if (state == null) {
            return;
        }
        long expiresAt = algorithm.expiresAt(state);
        assertThat(expiresAt).isGreaterThanOrEqualTo(state.nextFreeTicketMicros());
        if (expiresAt > state.nextFreeTicketMicros()) {
            assertThat(algorithm.resync(state, expiresAt - 1).storedPermits()).isLessThan(algorithm.maxPermits);
        }
        long t = expiresAt + extra;
        long maxWait = SmoothPropertyChecks.maxWait(probes.get(0), algorithm.stableIntervalMicros);
        Step<SmoothAlgorithm.State> old = algorithm.step(state, t, permits, maxWait);
        Step<SmoothAlgorithm.State> fresh = algorithm.step(null, t, permits, maxWait);
        assertThat(algorithm.resync(state, t).storedPermits()).isEqualTo(algorithm.maxPermits);
        assertThat(fresh.allowed()).isEqualTo(old.allowed()).isTrue();
        assertThat(fresh.waitMicros()).isEqualTo(old.waitMicros()).isZero();
        assertThat(fresh.remaining()).isLessThanOrEqualTo(old.remaining());
        if (permits > 0) {
            assertThat(fresh.admitted().nextFreeTicketMicros())
                    .isGreaterThanOrEqualTo(old.admitted().nextFreeTicketMicros());
            assertThat(fresh.admitted().storedPermits()).isLessThanOrEqualTo(old.admitted().storedPermits());
        }
        if (algorithm.maxPermits == 0.0) { // no burst to lose: exact
            assertThat(fresh.admitted()).isEqualTo(permits > 0 ? old.admitted() : null);
        }
    }

    /**
     * Dropping state is invisible: a key whose state is dropped as soon as it expires (once idle and full) decides
     * every request as one that kept it; in particular, after an idle spell it serves the saved burst at once.
     */
    @Property(tries = 400)
    void aKeyThatDropsItsStateDecidesAsOneThatKeepsIt(@ForAll("limits") SmoothBursty limit,
                                                     @ForAll("idleRequests") List<BucketRun.Req> requests,
                                                     @ForAll @LongRange(min = 0, max = 1L << 40) long start) {
        DroppedStateRun.assertInvisible(new SmoothBurstyAlgorithm(limit), requests, start);
    }

    @Provide
    Arbitrary<List<BucketRun.Req>> idleRequests() {
        return DroppedStateRun.requests(Arbitraries.longs().between(0, 30), 30_000_000);
    }

    /** After idling until full, a key admits its whole saved burst (and one more) with no wait, state or not. */
    @Property(tries = 300)
    void anIdleKeyServesItsSavedBurstAtOnce(@ForAll("limits") SmoothBursty limit, @ForAll("ops") List<Op> ops,
                                           @ForAll @LongRange(min = 0, max = 1L << 40) long start) {
        SmoothBurstyAlgorithm algorithm = new SmoothBurstyAlgorithm(limit);
        Run run = SmoothPropertyChecks.run(algorithm, start, ops);
        SmoothAlgorithm.State state = run.state();
        long full = state == null ? run.now() : Math.max(run.now(), algorithm.expiresAt(state));
        if (full > Arith.MAX_TIME) {
            return;
        }
        long burst = (long) Math.floor(algorithm.maxPermits);
        for (SmoothAlgorithm.State s : new SmoothAlgorithm.State[] {state, null}) {
            SmoothAlgorithm.State current = s;
            for (long i = 0; i <= Math.min(burst, 50); i++) {
                Step<SmoothAlgorithm.State> step = algorithm.step(current, full, 1, 0);
                assertThat(step.allowed()).as("permit %d of a burst of %d", i + 1, burst).isTrue();
                assertThat(step.waitMicros()).isZero();
                current = step.admitted();
            }
        }
    }
}
