package io.sluice.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Concurrency;
import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.Gcra;
import io.sluice.LeakyBucket;
import io.sluice.Limit;
import io.sluice.RefreshPeriod;
import io.sluice.Request;
import io.sluice.RollingWindow;
import io.sluice.Rule;
import io.sluice.SlidingLog;
import io.sluice.SlidingWindow;
import io.sluice.SmoothBursty;
import io.sluice.SmoothWarmingUp;
import io.sluice.TokenBucket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * All-or-nothing across the limits of a rule: a rejected request (or any peek) changes no limit's state;
 * an admitted one reports the smallest remaining and the longest wait.
 */
class RuleEvaluatorPropertiesTest {

    record Op(long advanceMicros, int kind, long permits, long maxWaitMicros) {}

    @Provide
    Arbitrary<List<Limit>> rules() {
        Arbitrary<Limit> limit = Arbitraries.of(
                FixedWindow.of(5, Duration.ofSeconds(1)),
                SlidingLog.of(4, Duration.ofSeconds(1)),
                SlidingWindow.of(6, Duration.ofSeconds(1)),
                RollingWindow.of(5, Duration.ofSeconds(1), Duration.ofMillis(100)),
                TokenBucket.of(3, 1, Duration.ofMillis(300)),
                Gcra.of(5, Duration.ofSeconds(1)).withBurst(3),
                LeakyBucket.of(4, Duration.ofSeconds(1)).withBurst(2),
                SmoothBursty.of(4),
                SmoothWarmingUp.of(4, Duration.ofSeconds(1)),
                RefreshPeriod.of(3, Duration.ofMillis(500)),
                Concurrency.of(3, Duration.ofMillis(700)));
        return limit.list().ofMinSize(2).ofMaxSize(3).uniqueElements(Limit::algorithm);
    }

    @Provide
    Arbitrary<List<Op>> ops() {
        return Combinators.combine(
                Arbitraries.longs().between(0, 400_000),
                Arbitraries.integers().between(0, 3),
                Arbitraries.longs().between(1, 3),
                Arbitraries.of(0L, 200_000L, 2_000_000L))
                .as(Op::new).list().ofMinSize(1).ofMaxSize(60);
    }

    @Property(tries = 300)
    void rejectedRequestsAndPeeksChangeNoLimit(@ForAll("rules") List<Limit> limits, @ForAll("ops") List<Op> ops) {
        CompiledRule rule = new CompiledRule(Rule.of("r", limits));
        Object[] states = new Object[rule.size()];
        long now = 1_767_225_600_000_000L;
        for (Op op : ops) {
            now += op.advanceMicros();
            Request request = switch (op.kind()) {
                case 0 -> Request.tryAcquire(op.permits());
                case 1 -> Request.tryAcquireAtMost(op.permits());
                case 2 -> Request.reserve(op.permits(), op.maxWaitMicros());
                default -> Request.peek(op.permits());
            };
            RuleEvaluator.Outcome outcome = RuleEvaluator.evaluate(rule, states, now, request);
            Decision d = outcome.decision();
            if (!d.allowed() || request.op() == Request.Op.PEEK) {
                assertThat(outcome.states()).as("state after %s -> %s", request, d).isNull();
                assertThat(d.granted()).isZero();
            } else {
                assertThat(d.granted()).isBetween(1L, op.permits());
                if (request.op() != Request.Op.TRY_AT_MOST) {
                    assertThat(d.granted()).isEqualTo(op.permits());
                }
                if (request.op() != Request.Op.RESERVE) {
                    assertThat(d.waitMicros()).isZero();
                } else {
                    assertThat(d.waitMicros()).isLessThanOrEqualTo(op.maxWaitMicros());
                }
                if (outcome.states() != null) {
                    states = outcome.states();
                }
            }
            assertThat(d.remaining()).isNotNegative();
        }
    }

    @Property(tries = 200)
    void admittedDecisionReportsTheTightestLimit(@ForAll("rules") List<Limit> limits) {
        CompiledRule rule = new CompiledRule(Rule.of("r", limits));
        Object[] states = new Object[rule.size()];
        long now = 1_767_225_600_000_000L;
        List<Long> remainings = new ArrayList<>();
        RuleEvaluator.Outcome outcome = RuleEvaluator.evaluate(rule, states, now, Request.tryAcquire(1));
        for (int i = 0; i < rule.size(); i++) {
            Object[] single = new Object[] {null};
            CompiledRule one = new CompiledRule(Rule.of("one", limits.get(i)));
            remainings.add(RuleEvaluator.evaluate(one, single, now, Request.tryAcquire(1)).decision().remaining());
        }
        assertThat(outcome.decision().allowed()).isTrue();
        assertThat(outcome.decision().remaining()).isEqualTo(remainings.stream().mapToLong(Long::longValue).min().orElseThrow());
    }
}
