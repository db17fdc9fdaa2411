package io.sluice.internal.algorithm;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Limit;
import io.sluice.SmoothWarmingUp;
import io.sluice.internal.algorithm.SmoothPropertyChecks.Op;
import io.sluice.internal.algorithm.SmoothPropertyChecks.Run;
import java.time.Duration;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.LongRange;

/** Invariants of smooth_warming_up over random request sequences applied with the store's commit rule. */
class SmoothWarmingUpPropertiesTest {

    @Provide
    Arbitrary<SmoothWarmingUp> limits() {
        return Combinators.combine(SmoothPropertyChecks.rates(), Arbitraries.longs().between(1, 20_000_000),
                        Arbitraries.oneOf(Arbitraries.of(1.0, 2.0, 3.0, 10.0),
                                Arbitraries.doubles().between(1.0, 1000.0)))
                .as((rate, warmup, cold) -> SmoothWarmingUp.of(rate, Duration.ofNanos(warmup * 1000))
                        .withColdFactor(cold));
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
    Arbitrary<SmoothWarmingUp> extremeLimits() {
        return Combinators.combine(Arbitraries.of(1.0 / 31_622_400, 1e-7, 0.01, 1.0, 1_000_000.0),
                        Arbitraries.of(1L, 1_000_000L, 31_622_400_000_000L), Arbitraries.of(1.0, 3.0, 1000.0))
                .as((rate, warmup, cold) -> SmoothWarmingUp.of(rate, Duration.ofNanos(warmup * 1000))
                        .withColdFactor(cold));
    }

    /**
     * Stored permits never cost less than fresh ones, so between the usable times of admitted requests i and
     * j, requests i .. j-1 got at most the stable rate times the elapsed time, plus 3 us per request for
     * Guava's three truncations. Every step honours its own contract and the state stays in range.
     */
    @Property(tries = 250)
    void neverFasterThanTheStableRate(@ForAll("limits") SmoothWarmingUp limit, @ForAll("ops") List<Op> ops,
                                      @ForAll @LongRange(min = 0, max = 1L << 52) long start) {
        SmoothWarmingUpAlgorithm algorithm = new SmoothWarmingUpAlgorithm(limit);
        Run run = SmoothPropertyChecks.run(algorithm, start, ops);
        SmoothPropertyChecks.checkRate(run.grants(), algorithm.stableIntervalMicros, false, 3);
    }

    @Property(tries = 150)
    void clockJumpingBack(@ForAll("limits") SmoothWarmingUp limit, @ForAll("jumpingOps") List<Op> ops,
                          @ForAll @LongRange(min = 0, max = 1L << 40) long start) {
        SmoothPropertyChecks.run(new SmoothWarmingUpAlgorithm(limit), start, ops);
    }

    @Property(tries = 150)
    void noOverflowNearTheEndOfTime(@ForAll("extremeLimits") SmoothWarmingUp limit, @ForAll("hugeOps") List<Op> ops,
                                    @ForAll @LongRange(min = Arith.MAX_TIME - 1_000_000_000L, max = Arith.MAX_TIME)
                                    long start, @ForAll @LongRange(min = 0, max = Limit.MAX_COUNT) long permits) {
        SmoothWarmingUpAlgorithm algorithm = new SmoothWarmingUpAlgorithm(limit);
        Run run = SmoothPropertyChecks.run(algorithm, start, ops);
        Step<SmoothAlgorithm.State> last = algorithm.step(run.state(), run.now(), permits, Long.MAX_VALUE);
        assertThat(last.allowed()).isTrue();
        assertThat(last.waitMicros()).isBetween(0L, Arith.MAX_TIME);
    }

    /** A cold key is a new key: from expiresAt on, every decision and every new state is identical. */
    @Property(tries = 250)
    void expiryIsExact(@ForAll("limits") SmoothWarmingUp limit, @ForAll("ops") List<Op> ops,
                       @ForAll @LongRange(min = 0, max = 1L << 52) long start,
                       @ForAll @LongRange(min = 0, max = 100_000_000) long extra,
                       @ForAll @LongRange(min = 0, max = 100) long permits, @ForAll("ops") List<Op> probes) {
        SmoothWarmingUpAlgorithm algorithm = new SmoothWarmingUpAlgorithm(limit);
        SmoothAlgorithm.State state = SmoothPropertyChecks.run(algorithm, start, ops).state();
        if (state == null) {
            return;
        }
        long expiresAt = algorithm.expiresAt(state);
        if (expiresAt > state.nextFreeTicketMicros()) {
            assertThat(algorithm.resync(state, expiresAt - 1).storedPermits()).isLessThan(algorithm.maxPermits);
        }
        long t = expiresAt + extra;
        long maxWait = SmoothPropertyChecks.maxWait(probes.get(0), algorithm.stableIntervalMicros);
        Step<SmoothAlgorithm.State> old = algorithm.step(state, t, permits, maxWait);
        Step<SmoothAlgorithm.State> fresh = algorithm.step(null, t, permits, maxWait);
        assertThat(new long[] {old.allowed() ? 1 : 0, old.waitMicros(), old.remaining(), old.retryAfterMicros(),
                old.resetAfterMicros()})
                .containsExactly(fresh.allowed() ? 1 : 0, fresh.waitMicros(), fresh.remaining(),
                        fresh.retryAfterMicros(), fresh.resetAfterMicros());
        if (permits > 0) {
            assertThat(old.admitted()).isEqualTo(fresh.admitted());
        }
    }

    /** Dropping state is invisible: a key whose state is dropped once it expires (idle, cold and full) decides as one that kept it. */
    @Property(tries = 300)
    void aKeyThatDropsItsStateDecidesAsOneThatKeepsIt(@ForAll("limits") SmoothWarmingUp limit,
                                                     @ForAll("idleRequests") List<BucketRun.Req> requests,
                                                     @ForAll @LongRange(min = 0, max = 1L << 40) long start) {
        DroppedStateRun.assertInvisible(new SmoothWarmingUpAlgorithm(limit), requests, start);
    }

    @Provide
    Arbitrary<List<BucketRun.Req>> idleRequests() {
        return DroppedStateRun.requests(Arbitraries.longs().between(0, 30), 60_000_000);
    }
}
