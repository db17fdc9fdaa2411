package io.sluice.internal.algorithm;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.LeakyBucket;
import io.sluice.Limit;
import io.sluice.internal.algorithm.BucketRun.Req;
import io.sluice.internal.algorithm.LeakyBucketAlgorithm.State;
import java.math.BigInteger;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.constraints.LongRange;

class LeakyBucketPropertiesTest {

    /** An admitted request: its excess after admission, when it is used, and its permits. */
    record Admission(long excess, long at, long permits) {}

    @Provide
    Arbitrary<LeakyBucket> limits() {
        Arbitrary<Long> limit = Arbitraries.longs().between(1, 20);
        Arbitrary<Long> period = Arbitraries.frequencyOf(
                Tuple.of(1, Arbitraries.longs().between(1, 50)),
                Tuple.of(3, Arbitraries.longs().between(50, 2_000_000)),
                Tuple.of(1, Arbitraries.of(1_000_000L, 60_000_000L)));
        Arbitrary<Long> burst = Arbitraries.longs().between(0, 20);
        Arbitrary<Boolean> nodelay = Arbitraries.of(true, false, false);
        Arbitrary<Long> delay = Arbitraries.longs().between(0, 20);
        return Combinators.combine(limit, period, burst, nodelay, delay).as((l, p, b, n, d) ->
                new LeakyBucket("lb", l, Duration.ofNanos(p * 1_000), b, n, n ? 0 : Math.min(d, b)));
    }

    @Provide
    Arbitrary<List<Req>> requests() {
        return BucketRun.requests(Arbitraries.frequencyOf(
                Tuple.of(1, Arbitraries.just(0L)),
                Tuple.of(6, Arbitraries.just(1L)),
                Tuple.of(2, Arbitraries.longs().between(2, 21))));
    }

    @Property(tries = 500)
    void excessStaysWithinBurstAndDelayedRequestsLeaveAtTheRate(@ForAll("limits") LeakyBucket limit,
                                                                @ForAll("requests") List<Req> requests,
                                                                @ForAll @LongRange(max = 1L << 40) long start) {
        LeakyBucketAlgorithm lb = new LeakyBucketAlgorithm(limit);
        long period = Arith.micros(limit.period());
        long delayMilli = (limit.nodelay() ? limit.burst() : limit.delay()) * 1000;
        State state = null;
        long now = start;
        List<Admission> admissions = new ArrayList<>();
        for (Req req : requests) {
            now += req.advance();
            long permits = Math.min(req.permits(), limit.maxPermits());
            long grantable = lb.grantable(state, now, permits);
            assertThat(lb.step(state, now, grantable, 0).allowed()).isTrue();
            if (grantable < permits) {
                assertThat(lb.step(state, now, grantable + 1, 0).allowed()).isFalse();
            }
            Step<State> step = lb.step(state, now, permits, req.maxWait());
            BucketRun.assertSane(step, state, req.maxWait());
            if (!step.allowed()) {
                assertRetryIsExact(lb, step, now, permits);
            } else if (permits > 0) {
                long excess = step.admitted().excess();
                if (step.waitMicros() > 0) {
                    assertThat(excess).isGreaterThan(delayMilli);
                }
                admissions.add(new Admission(excess, now + step.waitMicros(), permits));
            }
            state = step.allowed() ? step.admitted() : step.rejected();
            if (state != null) {
                assertThat(state.excess()).isBetween(0L, limit.burst() * 1000);
            }
        }
        for (int i = 0; i < admissions.size(); i++) {
            long permitsAfter = 0;
            for (int j = i + 1; j < admissions.size(); j++) {
                permitsAfter += admissions.get(j).permits();
                Admission first = admissions.get(i);
                Admission later = admissions.get(j);
                if (first.excess() > delayMilli && later.excess() > delayMilli) {
                    // u_j − u_i > (n_{i+1} + … + n_j) · period / limit − 1
                    assertThat(BigInteger.valueOf(later.at() - first.at() + 1).multiply(BigInteger.valueOf(limit.limit())))
                            .isGreaterThan(BigInteger.valueOf(permitsAfter).multiply(BigInteger.valueOf(period)));
                }
            }
        }
    }

    /**
     * For one-permit requests: permits used in any [x, y] ≤ burst + 1 + floor((y − x) · limit / period).
     * (With θ = now + (excess + 1000) · period / (limit · 1000), every admission has θ ≥ max(now, θ_prev) +
     * period/limit and θ ≤ now + (burst + 1) · period/limit, as GCRA with burst + 1, and its use time is
     * ≤ θ − period/limit. A batch of n is used when its last permit is due, so batches can put up to
     * n − 1 − delay more permits in a window; their bound is the spacing above.)
     */
    @Property(tries = 400)
    void singlePermitStreamsStayWithinBurstPlusRate(@ForAll("limits") LeakyBucket limit,
                                                   @ForAll("requests") List<Req> requests) {
        LeakyBucketAlgorithm lb = new LeakyBucketAlgorithm(limit);
        long period = Arith.micros(limit.period());
        State state = null;
        long now = 1_000_000_000;
        List<BucketRun.Use> uses = new ArrayList<>();
        for (Req req : requests) {
            now += req.advance();
            long permits = Math.min(req.permits(), 1);
            Step<State> step = lb.step(state, now, permits, req.maxWait());
            if (step.allowed() && permits > 0) {
                uses.add(new BucketRun.Use(now + step.waitMicros(), permits));
            }
            state = step.allowed() ? step.admitted() : step.rejected();
        }
        BucketRun.assertWindows(uses, (x, y) -> limit.burst() + 1 + Arith.mulDivFloor(y - x, limit.limit(), period));
    }

    /** The same request passes with no wait after retryAfter, and not one µs earlier. */
    private static void assertRetryIsExact(LeakyBucketAlgorithm lb, Step<State> step, long now, long permits) {
        long retry = step.retryAfterMicros();
        if (retry == Long.MAX_VALUE) {
            assertThat(lb.step(step.rejected(), now + 10_000_000_000L, permits, 0).allowed()).isFalse();
            return;
        }
        assertThat(lb.step(step.rejected(), now + retry, permits, 0).allowed()).isTrue();
        assertThat(lb.step(step.rejected(), now + retry - 1, permits, 0).allowed()).isFalse();
    }

    @Property(tries = 300)
    void aStateAtOrAfterExpiresAtDecidesLikeNoState(@ForAll("limits") LeakyBucket limit,
                                                   @ForAll("requests") List<Req> requests,
                                                   @ForAll @LongRange(max = 21) long permits,
                                                   @ForAll @LongRange(max = 5_000_000) long after,
                                                   @ForAll @LongRange(max = 3_000_000) long maxWait) {
        LeakyBucketAlgorithm lb = new LeakyBucketAlgorithm(limit);
        State state = null;
        long now = 1_000_000_000;
        for (Req req : requests) {
            now += req.advance();
            Step<State> step = lb.step(state, now, Math.min(req.permits(), limit.maxPermits()), req.maxWait());
            state = step.allowed() ? step.admitted() : step.rejected();
        }
        if (state == null) {
            return;
        }
        long expiresAt = lb.expiresAt(state);
        long n = Math.min(permits, limit.maxPermits());
        Step<State> kept = lb.step(state, expiresAt + after, n, maxWait);
        Step<State> fresh = lb.step(null, expiresAt + after, n, maxWait);
        assertThat(BucketRun.decision(kept)).isEqualTo(BucketRun.decision(fresh));
        if (n > 0) {
            assertThat(kept.admitted()).isEqualTo(fresh.admitted());
        }
        // exact: one µs earlier a one-permit request still finds excess, unlike a new key
        Step<State> early = lb.step(state, expiresAt - 1, 1, Long.MAX_VALUE);
        Step<State> earlyFresh = lb.step(null, expiresAt - 1, 1, Long.MAX_VALUE);
        assertThat(BucketRun.decision(early) + early.admitted()).isNotEqualTo(
                BucketRun.decision(earlyFresh) + earlyFresh.admitted());
    }

    @Provide
    Arbitrary<LeakyBucket> extremeLimits() {
        Arbitrary<Long> limit = Arbitraries.of(1L, 3L, 1_000_000_000L);
        Arbitrary<Duration> period = Arbitraries.of(Duration.ofNanos(1_000), Duration.ofSeconds(1), Limit.MAX_DURATION);
        Arbitrary<Long> burst = Arbitraries.of(0L, 1L, 999_999_999L, 1_000_000_000L);
        Arbitrary<Boolean> nodelay = Arbitraries.of(true, false);
        Arbitrary<Long> delay = Arbitraries.of(0L, 1L, 1_000_000_000L);
        return Combinators.combine(limit, period, burst, nodelay, delay).as((l, p, b, n, d) ->
                new LeakyBucket("lb", l, p, b, n, n ? 0 : Math.min(d, b)));
    }

    @Provide
    Arbitrary<List<Req>> extremeRequests() {
        return BucketRun.extremeRequests(Arbitraries.of(0L, 1L, 2L, 1_000_000_000L, 1_000_000_001L));
    }

    @Property(tries = 300)
    void noOverflowNearTheEndOfTimeWithMaxCounts(@ForAll("extremeLimits") LeakyBucket limit,
                                                @ForAll("extremeRequests") List<Req> requests) {
        LeakyBucketAlgorithm lb = new LeakyBucketAlgorithm(limit);
        State state = null;
        for (Req req : requests) {
            long now = Arith.MAX_TIME - req.advance();
            Step<State> step = lb.step(state, now, Math.min(req.permits(), limit.maxPermits()), req.maxWait());
            BucketRun.assertSane(step, state, req.maxWait());
            if (step.allowed()) {
                assertThat(now + step.waitMicros()).isLessThanOrEqualTo(Arith.MAX_TIME);
            }
            state = step.allowed() ? step.admitted() : step.rejected();
            if (state != null) {
                assertThat(state.excess()).isBetween(0L, limit.burst() * 1000);
                assertThat(lb.expiresAt(state)).satisfiesAnyOf(
                        e -> assertThat(e).isLessThanOrEqualTo(Arith.MAX_TIME),
                        e -> assertThat(e).isEqualTo(Long.MAX_VALUE));
            }
        }
    }
}
