package io.sluice.internal.algorithm;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Limit;
import io.sluice.RefreshPeriod;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.constraints.LongRange;

/** Invariants of refresh_period over random request sequences applied with the store's commit rule. */
class RefreshPeriodPropertiesTest {

    /** One request: advance and patience in periods (patience < 0: unbounded), permits in limits. */
    record Op(double advancePeriods, double permitsInLimits, double patiencePeriods) {}

    record Grant(long usable, long permits) {}

    record Run(List<Grant> grants, RefreshPeriodAlgorithm.State state, long now) {}

    @Provide
    Arbitrary<RefreshPeriod> limits() {
        return Combinators.combine(
                Arbitraries.oneOf(Arbitraries.of(1L, 2L, 3L, 10L), Arbitraries.longs().between(1, 1000)),
                Arbitraries.oneOf(Arbitraries.of(1L, 7L, 1000L, 250_000L, 1_000_000L),
                        Arbitraries.longs().between(1, 10_000_000)))
                .as((limit, period) -> RefreshPeriod.of(limit, Duration.ofNanos(period * 1000)));
    }

    @Provide
    Arbitrary<RefreshPeriod> extremeLimits() {
        return Combinators.combine(Arbitraries.of(1L, 1000L, Limit.MAX_COUNT),
                        Arbitraries.of(1L, 1_000_000L, Duration.ofDays(366).toNanos() / 1000))
                .as((limit, period) -> RefreshPeriod.of(limit, Duration.ofNanos(period * 1000)));
    }

    private static Arbitrary<List<Op>> ops(double maxBack, double maxPermits, boolean reservations) {
        Arbitrary<Double> advance = Arbitraries.frequencyOf(
                Tuple.of(2, Arbitraries.just(0.0)),
                Tuple.of(maxBack > 0 ? 2 : 0, Arbitraries.doubles().between(-maxBack, 0.0)),
                Tuple.of(6, Arbitraries.doubles().between(0.0, 1.5)),
                Tuple.of(1, Arbitraries.doubles().between(1.5, 6.0)));
        Arbitrary<Double> permits = Arbitraries.frequencyOf(
                Tuple.of(1, Arbitraries.just(0.0)),
                Tuple.of(6, Arbitraries.doubles().between(0.0, 1.0)),
                Tuple.of(2, Arbitraries.doubles().between(0.0, maxPermits)));
        Arbitrary<Double> patience = reservations
                ? Arbitraries.oneOf(Arbitraries.just(0.0), Arbitraries.just(-1.0),
                        Arbitraries.doubles().between(0.0, 3.0))
                : Arbitraries.just(0.0);
        return Combinators.combine(advance, permits, patience).as(Op::new).list().ofMinSize(1).ofMaxSize(60);
    }

    @Provide
    Arbitrary<List<Op>> ops() {
        return ops(0, 3.0, true);
    }

    @Provide
    Arbitrary<List<Op>> atMostLimitOps() {
        return ops(0, 1.0, true);
    }

    @Provide
    Arbitrary<List<Op>> immediateOps() {
        return ops(0, 3.0, false);
    }

    @Provide
    Arbitrary<List<Op>> jumpingOps() {
        return ops(4.0, 3.0, true);
    }

    @Provide
    Arbitrary<List<Op>> hugeOps() {
        return ops(0, 1L << 53, true);
    }

    private static long permits(Op op, long limit) {
        double permits = Math.ceil(op.permitsInLimits() * limit);
        return permits >= 0x1p63 ? Long.MAX_VALUE : (long) permits;
    }

    private static long maxWait(Op op, long period) {
        return op.patiencePeriods() < 0 ? Long.MAX_VALUE : (long) (op.patiencePeriods() * period);
    }

    private static Run run(RefreshPeriodAlgorithm algorithm, long start, List<Op> ops) {
        RefreshPeriod limit = (RefreshPeriod) algorithm.limit();
        long period = Arith.micros(limit.refreshPeriod());
        List<Grant> grants = new ArrayList<>();
        RefreshPeriodAlgorithm.State state = null;
        long now = start;
        for (Op op : ops) {
            now = Math.max(0, Math.min(Arith.MAX_TIME, Arith.addSat(now, (long) (op.advancePeriods() * period))));
            long permits = permits(op, limit.limitForPeriod());
            long maxWait = maxWait(op, period);
            Step<RefreshPeriodAlgorithm.State> step = algorithm.step(state, now, permits, maxWait);
            checkStep(algorithm, state, now, permits, maxWait, step);
            RefreshPeriodAlgorithm.State next = step.allowed() ? step.admitted() : step.rejected();
            if (step.allowed() && permits > 0) {
                long effectiveNow = Math.max(now, next.origin() + next.activeCycle() * period);
                grants.add(new Grant(effectiveNow + step.waitMicros(), permits));
            }
            if (next != null) {
                assertThat(next.activePermissions())
                        .isBetween(-RefreshPeriodAlgorithm.MAX_DEBT, limit.limitForPeriod());
                if (state != null) {
                    assertThat(next.origin()).isEqualTo(state.origin());
                    assertThat(next.activeCycle()).isGreaterThanOrEqualTo(state.activeCycle());
                }
            }
            state = next;
        }
        return new Run(grants, state, now);
    }

    private static void checkStep(RefreshPeriodAlgorithm algorithm, RefreshPeriodAlgorithm.State state, long now,
                                  long permits, long maxWait, Step<RefreshPeriodAlgorithm.State> step) {
        assertThat(step.rejected()).isSameAs(state);
        assertThat(step.remaining()).isNotNegative();
        assertThat(step.resetAfterMicros()).isNotNegative();
        if (permits == 0) {
            assertThat(step.allowed()).isTrue();
            assertThat(step.admitted()).isSameAs(state);
        }
        if (step.allowed()) {
            assertThat(step.retryAfterMicros()).isZero();
            assertThat(step.waitMicros()).isBetween(0L, maxWait);
        } else {
            assertThat(step.admitted()).isNull();
            long retry = step.retryAfterMicros();
            assertThat(retry).isPositive();
            long period = Arith.micros(((RefreshPeriod) algorithm.limit()).refreshPeriod());
            // retryAfter counts from the effective now (never before the state's active cycle)
            long base = state == null ? now : Math.max(now, state.origin() + state.activeCycle() * period);
            if (retry == Long.MAX_VALUE) {
                for (long k = 1; k <= 12; k++) {
                    long t = Arith.addSat(base, Arith.mulSat(k, Math.max(1, period / 3)));
                    if (t <= Arith.MAX_TIME) {
                        assertThat(algorithm.step(state, t, permits, 0).allowed()).isFalse();
                    }
                }
            } else if (retry <= Arith.MAX_TIME - base) {
                // retry-after is for the same permits as a try (the SPI's definition)
                assertThat(algorithm.step(state, base + retry, permits, 0).allowed()).isTrue();
                assertThat(algorithm.step(state, base + retry - 1, permits, 0).allowed()).isFalse();
            }
        }
        long grantable = algorithm.grantable(state, now, permits);
        assertThat(grantable).isBetween(0L, permits);
        assertThat(algorithm.step(state, now, grantable, 0).allowed()).isTrue();
        if (grantable < permits) {
            assertThat(algorithm.step(state, now, grantable + 1, 0).allowed()).isFalse();
        }
    }

    /** Permits by the cycle (of the key's own phase) in which they become usable. */
    private static TreeMap<Long, Long> usableByCycle(Run run, long period) {
        TreeMap<Long, Long> byCycle = new TreeMap<>();
        for (Grant grant : run.grants()) {
            byCycle.merge((grant.usable() - run.state().origin()) / period, grant.permits(), Long::sum);
        }
        return byCycle;
    }

    /**
     * No permit is handed out twice: by the end of cycle k at most (k + 1) * L permits have become usable,
     * whatever the sizes and waits; every step honours its contract (exact retryAfter, grantable, rejected
     * = input) and the state stays in [-MAX_DEBT, L].
     */
    @Property(tries = 250)
    void neverMoreThanTheCyclesSoFarProvide(@ForAll("limits") RefreshPeriod limit, @ForAll("ops") List<Op> ops,
                                            @ForAll @LongRange(min = 0, max = 1L << 52) long start) {
        Run run = run(new RefreshPeriodAlgorithm(limit), start, ops);
        long period = Arith.micros(limit.refreshPeriod());
        long total = 0;
        for (var cycle : usableByCycle(run, period).entrySet()) {
            total += cycle.getValue();
            assertThat(total).isLessThanOrEqualTo((cycle.getKey() + 1) * limit.limitForPeriod());
        }
    }

    /** With requests of at most L, any n consecutive cycles see at most (n + 1) * L become usable. */
    @Property(tries = 250)
    void reservationsCarryAtMostOneCycle(@ForAll("limits") RefreshPeriod limit,
                                         @ForAll("atMostLimitOps") List<Op> ops,
                                         @ForAll @LongRange(min = 0, max = 1L << 52) long start) {
        Run run = run(new RefreshPeriodAlgorithm(limit), start, ops);
        long period = Arith.micros(limit.refreshPeriod());
        List<long[]> cycles = new ArrayList<>();
        usableByCycle(run, period).forEach((cycle, permits) -> cycles.add(new long[] {cycle, permits}));
        for (int i = 0; i < cycles.size(); i++) {
            long sum = 0;
            for (int j = i; j < cycles.size(); j++) {
                sum += cycles.get(j)[1];
                long span = cycles.get(j)[0] - cycles.get(i)[0] + 1;
                assertThat(sum).isLessThanOrEqualTo((span + 1) * limit.limitForPeriod());
            }
        }
    }

    /** Without reservations at most L permits become usable per cycle. */
    @Property(tries = 200)
    void atMostTheLimitPerCycleWithoutReservations(@ForAll("limits") RefreshPeriod limit,
                                                   @ForAll("immediateOps") List<Op> ops,
                                                   @ForAll @LongRange(min = 0, max = 1L << 52) long start) {
        Run run = run(new RefreshPeriodAlgorithm(limit), start, ops);
        for (long permits : usableByCycle(run, Arith.micros(limit.refreshPeriod())).values()) {
            assertThat(permits).isLessThanOrEqualTo(limit.limitForPeriod());
        }
    }

    @Property(tries = 150)
    void clockJumpingBack(@ForAll("limits") RefreshPeriod limit, @ForAll("jumpingOps") List<Op> ops,
                          @ForAll @LongRange(min = 0, max = 1L << 40) long start) {
        run(new RefreshPeriodAlgorithm(limit), start, ops);
    }

    @Property(tries = 150)
    void noOverflowNearTheEndOfTime(@ForAll("extremeLimits") RefreshPeriod limit, @ForAll("hugeOps") List<Op> ops,
                                    @ForAll @LongRange(min = Arith.MAX_TIME - 1_000_000_000L, max = Arith.MAX_TIME)
                                    long start) {
        RefreshPeriodAlgorithm algorithm = new RefreshPeriodAlgorithm(limit);
        Run run = run(algorithm, start, ops);
        if (run.state() != null) {
            assertThat(algorithm.expiresAt(run.state())).isGreaterThan(run.state().origin());
        }
    }

    /**
     * From expiresAt on the key is full, and a new key (new phase) decides every request of at most L
     * identically; for larger reservations it is never more permissive.
     */
    @Property(tries = 250)
    void expiredKeyIsNeverMorePermissive(@ForAll("limits") RefreshPeriod limit, @ForAll("ops") List<Op> ops,
                                         @ForAll @LongRange(min = 0, max = 1L << 52) long start,
                                         @ForAll @LongRange(min = 0, max = 30_000_000) long extra,
                                         @ForAll("ops") List<Op> probes) {
        RefreshPeriodAlgorithm algorithm = new RefreshPeriodAlgorithm(limit);
        RefreshPeriodAlgorithm.State state = run(algorithm, start, ops).state();
        if (state == null) {
            return;
        }
        long t = algorithm.expiresAt(state) + extra;
        long permits = permits(probes.get(0), limit.limitForPeriod());
        long maxWait = maxWait(probes.get(0), Arith.micros(limit.refreshPeriod()));
        assertThat(algorithm.grantable(state, t, Long.MAX_VALUE)).isEqualTo(limit.limitForPeriod());
        Step<RefreshPeriodAlgorithm.State> old = algorithm.step(state, t, permits, maxWait);
        Step<RefreshPeriodAlgorithm.State> fresh = algorithm.step(null, t, permits, maxWait);
        if (permits <= limit.limitForPeriod()) {
            assertThat(new long[] {old.allowed() ? 1 : 0, old.waitMicros(), old.remaining(), old.retryAfterMicros()})
                    .containsExactly(fresh.allowed() ? 1 : 0, fresh.waitMicros(), fresh.remaining(),
                            fresh.retryAfterMicros());
        } else if (fresh.allowed()) {
            assertThat(old.allowed()).isTrue();
            assertThat(fresh.waitMicros()).isGreaterThanOrEqualTo(old.waitMicros());
        }
    }
}
