package io.sluice.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Concurrency;
import io.sluice.Decision;
import io.sluice.Limit;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.internal.RuleEvaluatorPropertiesTest.Op;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Shadow limits against their definition: a rule with shadow limits decides as the rule of its enforced limits
 * alone, and its shadow limits end up in the states, and report the verdicts, of the rule of the shadow limits
 * alone driven by the requests the enforced limits admitted.
 */
class ShadowEvaluatorPropertiesTest {

    private final RuleEvaluatorPropertiesTest rules = new RuleEvaluatorPropertiesTest();

    @Provide
    Arbitrary<List<Limit>> rules() {
        return rules.rules();
    }

    @Provide
    Arbitrary<List<Op>> ops() {
        return rules.ops();
    }

    @Provide
    Arbitrary<List<Boolean>> masks() {
        return Arbitraries.of(true, false).list().ofSize(3);
    }

    @Property(tries = 400)
    void enforcedLimitsDecideAloneAndShadowLimitsWatchWhatTheyAdmit(@ForAll("rules") List<Limit> limits,
                                                                   @ForAll("masks") List<Boolean> mask,
                                                                   @ForAll("ops") List<Op> ops) {
        List<Limit> enforced = new ArrayList<>();
        List<Limit> watching = new ArrayList<>();
        for (int i = 0; i < limits.size(); i++) {
            boolean shadow = mask.get(i) && !(limits.get(i) instanceof Concurrency);
            (shadow ? watching : enforced).add(limits.get(i));
        }
        if (watching.isEmpty()) {
            return;
        }
        CompiledRule both = new CompiledRule(Rule.of("r", limits)
                .withShadow(watching.stream().map(Limit::name).toArray(String[]::new)));
        CompiledRule alone = enforced.isEmpty() ? null : new CompiledRule(Rule.of("e", enforced));
        CompiledRule shadows = new CompiledRule(Rule.of("s", watching));
        Object[] states = new Object[both.size()];
        Object[] aloneStates = alone == null ? null : new Object[alone.size()];
        Object[] shadowStates = new Object[shadows.size()];
        long now = 1_767_225_600_000_000L;
        for (Op op : ops) {
            now += op.advanceMicros();
            Request request = switch (op.kind()) {
                case 0 -> Request.tryAcquire(op.permits());
                case 1 -> Request.tryAcquireAtMost(op.permits());
                case 2 -> Request.reserve(op.permits(), op.maxWaitMicros());
                default -> Request.peek(op.permits());
            };
            RuleEvaluator.Outcome outcome = RuleEvaluator.evaluate(both, states, now, request);
            Decision d = outcome.decision();
            Decision expected;
            if (alone != null) {
                RuleEvaluator.Outcome a = RuleEvaluator.evaluate(alone, aloneStates, now, request);
                expected = a.decision();
                aloneStates = a.states() == null ? aloneStates : a.states();
                assertThat(d.shadowRejected() ? withoutShadow(d) : d).as("%s at %d", request, now).isEqualTo(expected);
            } else {
                assertThat(d.allowed()).isTrue();
                assertThat(d.waitMicros()).isZero();
                expected = d;
            }
            // The shadow limits' own rule, asked what the enforced limits let through (a best effort as a try
            // for what they granted), and only when they let it through.
            Request watched = switch (request.op()) {
                case TRY_AT_MOST -> Request.tryAcquire(Math.max(1, expected.granted()));
                case PEEK -> request;
                default -> request;
            };
            RuleEvaluator.Outcome s = RuleEvaluator.evaluate(shadows, shadowStates, now, watched);
            assertThat(d.shadowLimit()).as("shadow verdict of %s at %d", request, now)
                    .isEqualTo(s.decision().allowed() ? null : s.decision().limit());
            assertThat(d.shadowRetryAfterMicros()).isEqualTo(s.decision().allowed() ? 0
                    : s.decision().retryAfterMicros());
            if (expected.allowed() && s.states() != null) {
                shadowStates = s.states();
            }
            if (outcome.states() != null) {
                states = outcome.states();
            }
            for (int i = 0, j = 0; i < both.size(); i++) {
                if (both.shadow(i)) {
                    assertThat(states[i]).as("state of shadow limit %s", both.algorithm(i).limit().name())
                            .isEqualTo(shadowStates[j++]);
                }
            }
        }
    }

    private static Decision withoutShadow(Decision d) {
        return new Decision(d.allowed(), d.granted(), d.remaining(), d.retryAfterMicros(), d.resetAfterMicros(),
                d.waitMicros(), d.limit(), d.lease(), d.source());
    }
}
