package io.sluice.internal.algorithm;

import static io.sluice.internal.algorithm.WindowAlgorithmsSupport.micros;
import static io.sluice.internal.algorithm.WindowAlgorithmsSupport.ops;
import static io.sluice.internal.algorithm.WindowAlgorithmsSupport.run;
import static io.sluice.internal.algorithm.WindowAlgorithmsSupport.scenarios;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Limit;
import io.sluice.SlidingWindow;
import io.sluice.internal.algorithm.SlidingWindowAlgorithm.State;
import io.sluice.internal.algorithm.WindowAlgorithmsSupport.Event;
import io.sluice.internal.algorithm.WindowAlgorithmsSupport.Scenario;
import java.math.BigInteger;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.LongRange;

class SlidingWindowPropertiesTest {

    @Provide
    Arbitrary<Scenario<SlidingWindow>> small() {
        Arbitrary<SlidingWindow> limits = Combinators.combine(
                        Arbitraries.longs().between(1, 15), Arbitraries.longs().between(1, 300))
                .as((limit, window) -> SlidingWindow.of(limit, micros(window)));
        return scenarios(limits, Arbitraries.longs().between(0, 5_000),
                l -> ops(Arith.micros(l.window()) / 4, Arith.micros(l.window()) * 3, l.limit(), 60));
    }

    @Provide
    Arbitrary<Scenario<SlidingWindow>> huge() {
        long longest = Arith.micros(Limit.MAX_DURATION);
        Arbitrary<SlidingWindow> limits = Combinators.combine(
                        Arbitraries.longs().between(Limit.MAX_COUNT - 3, Limit.MAX_COUNT),
                        Arbitraries.longs().between(longest - 1_000, longest))
                .as((limit, window) -> SlidingWindow.of(limit, micros(window)));
        return scenarios(limits, Arbitraries.longs().between(Arith.MAX_TIME - 3 * longest, Arith.MAX_TIME),
                l -> ops(Arith.micros(l.window()) / 3, Arith.micros(l.window()) * 2, l.limit(), 30));
    }

    /** Decides by the two-counter estimate over the admitted history; never more than the limit per window. */
    @Property(tries = 400)
    void matchesTheEstimateAndNeverExceedsTheLimitPerAlignedWindow(@ForAll("small") Scenario<SlidingWindow> s) {
        checkAgainstModel(s.limit(), run(new SlidingWindowAlgorithm(s.limit()), s.start(), s.ops(), false, false));
    }

    @Property(tries = 150)
    void noOverflowNearMaxTimeWithMaxCounts(@ForAll("huge") Scenario<SlidingWindow> s) {
        checkAgainstModel(s.limit(), run(new SlidingWindowAlgorithm(s.limit()), s.start(), s.ops(), false, false));
    }

    /**
     * More than the limit in one request can never pass: rejected with a retry-after of "never" ({@link
     * Arith#NEVER}, as every algorithm says it), whatever the counts and the time in the window; a request of at
     * most the limit that is rejected gets a wait in [1, 2W].
     */
    @Property(tries = 500)
    void aRequestForMoreThanTheLimitIsRejectedWithNever(@ForAll @LongRange(min = 1, max = 15) long limit,
                                                        @ForAll @LongRange(min = 1, max = 300) long window,
                                                        @ForAll @LongRange(max = 15) long previous,
                                                        @ForAll @LongRange(max = 15) long current,
                                                        @ForAll @LongRange(max = 900) long offset,
                                                        @ForAll @LongRange(min = 1, max = Limit.MAX_COUNT) long over,
                                                        @ForAll boolean fresh) {
        SlidingWindowAlgorithm a = new SlidingWindowAlgorithm(SlidingWindow.of(limit, micros(window)));
        long start = 1_000 * window;
        State state = fresh ? null : new State(start, Math.min(previous, limit), Math.min(current, limit));
        long permits = Math.min(Limit.MAX_COUNT, limit + over);
        Step<State> step = a.step(state, start + offset, permits, 0);
        assertThat(step.allowed()).isFalse();
        assertThat(step.retryAfterMicros()).isEqualTo(Arith.NEVER);
        Step<State> most = a.step(state, start + offset, limit, 0);
        if (!most.allowed()) {
            assertThat(most.retryAfterMicros()).isBetween(1L, 2 * window);
        }
    }

    @Property(tries = 200)
    void clockGoingBackwardsKeepsEverythingNonNegative(@ForAll("small") Scenario<SlidingWindow> s) {
        run(new SlidingWindowAlgorithm(s.limit()), s.start(), s.ops(), false, true);
    }

    /** The model: admitted permits per aligned window; the estimate in exact big-integer arithmetic. */
    private static void checkAgainstModel(SlidingWindow limit, List<Event<State>> events) {
        long window = Arith.micros(limit.window());
        Map<Long, Long> admitted = new HashMap<>();
        for (Event<State> e : events) {
            long start = e.time() - e.time() % window;
            long previous = admitted.getOrDefault(start - window, 0L);
            long current = admitted.getOrDefault(start, 0L);
            long estimate = BigInteger.valueOf(previous)
                    .multiply(BigInteger.valueOf(window - (e.time() - start)))
                    .divide(BigInteger.valueOf(window)).longValueExact() + current;
            boolean allowed = e.permits() == 0 || estimate + e.permits() <= limit.limit();
            assertThat(e.step().allowed()).as("at %d for %d", e.time(), e.permits()).isEqualTo(allowed);
            assertThat(e.step().remaining())
                    .isEqualTo(Math.max(0, limit.limit() - estimate - (allowed ? e.permits() : 0)));
            if (e.committedAdmitted() && e.permits() > 0) {
                assertThat(admitted.merge(start, e.permits(), Long::sum)).isLessThanOrEqualTo(limit.limit());
            }
        }
    }
}
