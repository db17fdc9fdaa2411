package io.sluice.internal.algorithm;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Gcra;
import io.sluice.Limit;
import io.sluice.internal.algorithm.BucketRun.Req;
import io.sluice.internal.algorithm.GcraAlgorithm.State;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.constraints.LongRange;

class GcraPropertiesTest {

    @Provide
    Arbitrary<Gcra> limits() {
        Arbitrary<Long> limit = Arbitraries.longs().between(1, 20);
        Arbitrary<Long> period = Arbitraries.frequencyOf(
                Tuple.of(1, Arbitraries.longs().between(20, 100)),
                Tuple.of(3, Arbitraries.longs().between(100, 2_000_000)),
                Tuple.of(1, Arbitraries.of(1_000_000L, 60_000_000L)));
        Arbitrary<Long> burst = Arbitraries.longs().between(1, 20);
        return Combinators.combine(limit, period, burst)
                .as((l, p, b) -> new Gcra("gcra", l, Duration.ofNanos(p * 1_000), b));
    }

    @Provide
    Arbitrary<List<Req>> requests() {
        return BucketRun.requests(Arbitraries.longs().between(0, 20));
    }

    /** The proved bound: permits usable in [x, y] ≤ burst + floor((y − x) / T). */
    @Property(tries = 500)
    void useTimesConformToBurstPlusRate(@ForAll("limits") Gcra limit, @ForAll("requests") List<Req> requests,
                                        @ForAll @LongRange(max = 1L << 40) long start) {
        GcraAlgorithm gcra = new GcraAlgorithm(limit);
        long interval = Arith.ceilDiv(Arith.micros(limit.period()), limit.limit());
        State state = null;
        long now = start;
        List<BucketRun.Use> uses = new ArrayList<>();
        for (Req req : requests) {
            now += req.advance();
            long permits = Math.min(req.permits(), limit.burst());
            long grantable = gcra.grantable(state, now, permits);
            assertThat(gcra.step(state, now, grantable, 0).allowed()).isTrue();
            if (grantable < permits) {
                assertThat(gcra.step(state, now, grantable + 1, 0).allowed()).isFalse();
            }
            Step<State> step = gcra.step(state, now, permits, req.maxWait());
            BucketRun.assertSane(step, state, req.maxWait());
            if (step.allowed()) {
                if (permits > 0) {
                    uses.add(new BucketRun.Use(now + step.waitMicros(), permits));
                }
                state = step.admitted();
            } else {
                state = step.rejected();
                if (step.retryAfterMicros() != Long.MAX_VALUE) {
                    // exact: passes as a try after retryAfter, not one µs before
                    assertThat(gcra.step(state, now + step.retryAfterMicros(), permits, 0).allowed()).isTrue();
                    assertThat(gcra.step(state, now + step.retryAfterMicros() - 1, permits, 0).allowed()).isFalse();
                }
            }
        }
        BucketRun.assertWindows(uses, (x, y) -> limit.burst() + (y - x) / interval);
    }

    @Property(tries = 300)
    void aStateAtOrAfterExpiresAtDecidesLikeNoState(@ForAll("limits") Gcra limit,
                                                   @ForAll("requests") List<Req> requests,
                                                   @ForAll @LongRange(max = 20) long permits,
                                                   @ForAll @LongRange(max = 5_000_000) long after,
                                                   @ForAll @LongRange(max = 3_000_000) long maxWait) {
        GcraAlgorithm gcra = new GcraAlgorithm(limit);
        State state = null;
        long now = 1_000_000_000;
        for (Req req : requests) {
            now += req.advance();
            Step<State> step = gcra.step(state, now, Math.min(req.permits(), limit.burst()), req.maxWait());
            state = step.allowed() ? step.admitted() : step.rejected();
        }
        if (state == null) {
            return;
        }
        long expiresAt = gcra.expiresAt(state);
        long n = Math.min(permits, limit.burst());
        Step<State> kept = gcra.step(state, expiresAt + after, n, maxWait);
        Step<State> fresh = gcra.step(null, expiresAt + after, n, maxWait);
        assertThat(BucketRun.decision(kept)).isEqualTo(BucketRun.decision(fresh));
        if (n > 0) {
            assertThat(kept.admitted()).isEqualTo(fresh.admitted());
        }
        assertThat(gcra.step(state, expiresAt - 1, 0, 0).remaining()).isLessThan(limit.burst());
    }

    /**
     * redis_rate's script_allow_n.lua transcribed with doubles, on microseconds where period/limit is whole
     * (so every value is an exact integer double): same verdict, remaining (Redis truncates the float),
     * retry_after and reset_after.
     */
    @Property(tries = 300)
    void agreesWithRedisRateAllowN(@ForAll("limits") Gcra candidate, @ForAll("requests") List<Req> requests) {
        long periodMicros = Arith.micros(candidate.period()) / candidate.limit() * candidate.limit();
        Gcra limit = new Gcra("gcra", candidate.limit(), Duration.ofNanos(periodMicros * 1_000), candidate.burst());
        GcraAlgorithm gcra = new GcraAlgorithm(limit);
        double emissionInterval = (double) periodMicros / limit.limit();
        double burstOffset = emissionInterval * limit.burst();
        State state = null;
        Double redisTat = null;
        long now = 1_000_000_000_000L;
        for (Req req : requests) {
            now += req.advance();
            long cost = req.permits();
            Step<State> ours = gcra.step(state, now, cost, 0);
            double tat = Math.max(redisTat == null ? now : redisTat, now);
            double newTat = tat + emissionInterval * cost;
            double diff = now - (newTat - burstOffset);
            double remaining = diff / emissionInterval;
            boolean redisAllows = remaining >= 0;
            assertThat(ours.allowed()).isEqualTo(redisAllows || cost == 0);
            if (redisAllows) {
                assertThat(ours.remaining()).isEqualTo((long) remaining);
                assertThat((double) ours.resetAfterMicros()).isEqualTo(Math.max(0, newTat - now));
                if (newTat - now > 0) {
                    redisTat = newTat;
                }
            } else if (cost <= limit.burst()) {
                assertThat((double) ours.retryAfterMicros()).isEqualTo(-diff);
                assertThat((double) ours.resetAfterMicros()).isEqualTo(tat - now);
            }
            state = ours.allowed() && cost > 0 ? ours.admitted() : state;
            assertThat(state == null ? null : (double) state.tat()).isEqualTo(redisTat);
        }
    }

    @Provide
    Arbitrary<Gcra> extremeLimits() {
        Arbitrary<Long> limit = Arbitraries.of(1L, 3L, 1_000_000L, Limit.MAX_COUNT);
        Arbitrary<Duration> period = Arbitraries.of(Duration.ofNanos(1_000), Duration.ofSeconds(1), Duration.ofDays(1),
                Limit.MAX_DURATION);
        Arbitrary<Long> burst = Arbitraries.of(1L, 2L, 1_000L, Limit.MAX_COUNT);
        return Combinators.combine(limit, period, burst).as(GcraPropertiesTest::gcraOrNull).filter(Objects::nonNull);
    }

    private static Gcra gcraOrNull(long limit, Duration period, long burst) {
        try {
            return new Gcra("gcra", limit, period, burst);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    @Provide
    Arbitrary<List<Req>> extremeRequests() {
        return BucketRun.extremeRequests(Arbitraries.of(0L, 1L, Limit.MAX_COUNT - 1, Limit.MAX_COUNT));
    }

    @Property(tries = 300)
    void noOverflowNearTheEndOfTimeWithMaxCounts(@ForAll("extremeLimits") Gcra limit,
                                                @ForAll("extremeRequests") List<Req> requests) {
        GcraAlgorithm gcra = new GcraAlgorithm(limit);
        State state = null;
        for (Req req : requests) {
            long now = Arith.MAX_TIME - req.advance();
            Step<State> step = gcra.step(state, now, req.permits(), req.maxWait());
            BucketRun.assertSane(step, state, req.maxWait());
            if (step.allowed()) {
                assertThat(now + step.waitMicros()).isLessThanOrEqualTo(Arith.MAX_TIME);
            }
            state = step.allowed() ? step.admitted() : step.rejected();
            if (state != null) {
                long burstOffset = limit.burst() * Arith.ceilDiv(Arith.micros(limit.period()), limit.limit());
                assertThat(state.tat()).isLessThanOrEqualTo(Arith.MAX_TIME + burstOffset);
            }
        }
    }
}
