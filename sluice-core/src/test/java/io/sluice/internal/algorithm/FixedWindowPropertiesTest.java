package io.sluice.internal.algorithm;

import static io.sluice.internal.algorithm.WindowAlgorithmsSupport.micros;
import static io.sluice.internal.algorithm.WindowAlgorithmsSupport.ops;
import static io.sluice.internal.algorithm.WindowAlgorithmsSupport.run;
import static io.sluice.internal.algorithm.WindowAlgorithmsSupport.scenarios;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.FixedWindow;
import io.sluice.FixedWindow.Align;
import io.sluice.Limit;
import io.sluice.internal.algorithm.FixedWindowAlgorithm.State;
import io.sluice.internal.algorithm.WindowAlgorithmsSupport.Event;
import io.sluice.internal.algorithm.WindowAlgorithmsSupport.Scenario;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

class FixedWindowPropertiesTest {

    @Provide
    Arbitrary<Scenario<FixedWindow>> small() {
        Arbitrary<FixedWindow> limits = Combinators.combine(
                        Arbitraries.longs().between(1, 12), Arbitraries.longs().between(1, 300),
                        Arbitraries.of(Align.class), Arbitraries.of(true, false))
                .as((limit, window, align, countRejected) -> FixedWindow.of(limit, micros(window))
                        .withAlign(align).withCountRejected(countRejected));
        return scenarios(limits, Arbitraries.longs().between(0, 5_000),
                l -> ops(Arith.micros(l.window()) / 4, Arith.micros(l.window()) * 3, l.limit(), 60));
    }

    @Provide
    Arbitrary<Scenario<FixedWindow>> huge() {
        long longest = Arith.micros(Limit.MAX_DURATION);
        Arbitrary<FixedWindow> limits = Combinators.combine(
                        Arbitraries.longs().between(Limit.MAX_COUNT - 3, Limit.MAX_COUNT),
                        Arbitraries.longs().between(longest - 1_000, longest),
                        Arbitraries.of(Align.class), Arbitraries.of(true, false))
                .as((limit, window, align, countRejected) -> FixedWindow.of(limit, micros(window))
                        .withAlign(align).withCountRejected(countRejected));
        return scenarios(limits, Arbitraries.longs().between(Arith.MAX_TIME - 3 * longest, Arith.MAX_TIME),
                l -> ops(Arith.micros(l.window()) / 3, Arith.micros(l.window()) * 2, l.limit(), 30));
    }

    /** Decides like a per-window counter of recorded permits, and never admits more than the limit per window. */
    @Property(tries = 400)
    void matchesAPerWindowCounterAndNeverExceedsTheLimit(@ForAll("small") Scenario<FixedWindow> s) {
        FixedWindowAlgorithm algorithm = new FixedWindowAlgorithm(s.limit());
        List<Event<State>> events = run(algorithm, s.start(), s.ops(), s.limit().countRejected(), false);
        checkAgainstModel(s.limit(), s.ops(), events);
    }

    @Property(tries = 150)
    void noOverflowNearMaxTimeWithMaxCounts(@ForAll("huge") Scenario<FixedWindow> s) {
        FixedWindowAlgorithm algorithm = new FixedWindowAlgorithm(s.limit());
        List<Event<State>> events = run(algorithm, s.start(), s.ops(), s.limit().countRejected(), false);
        checkAgainstModel(s.limit(), s.ops(), events);
        for (Event<State> e : events) {
            State after = e.step().allowed() ? e.step().admitted() : e.step().rejected();
            if (after != null) {
                assertThat(after.count()).isBetween(0L, FixedWindowAlgorithm.COUNT_CEILING);
            }
        }
    }

    @Property(tries = 200)
    void clockGoingBackwardsKeepsEverythingNonNegative(@ForAll("small") Scenario<FixedWindow> s) {
        run(new FixedWindowAlgorithm(s.limit()), s.start(), s.ops(), s.limit().countRejected(), true);
    }

    /**
     * The model: windows open at the epoch grid or at the first recorded request after the last one ended; the
     * verdict is {@code count + p <= limit}; recorded are admitted permits and, with countRejected, rejected ones.
     */
    private static void checkAgainstModel(FixedWindow limit, List<WindowAlgorithmsSupport.Op> ops,
                                          List<Event<State>> events) {
        long window = Arith.micros(limit.window());
        Map<Long, Long> admittedPerWindow = new HashMap<>();
        long start = -1;
        long count = 0;
        for (int i = 0; i < events.size(); i++) {
            Event<State> e = events.get(i);
            long t = e.time();
            long current = start >= 0 && t < start + window ? count : 0;
            assertThat(e.step().allowed()).isEqualTo(e.permits() == 0 || current + e.permits() <= limit.limit());
            boolean recorded = e.permits() > 0 && (e.committedAdmitted() || limit.countRejected());
            if (recorded) {
                if (current == 0) {
                    start = limit.align() == Align.EPOCH ? t - t % window : t;
                }
                count = current + e.permits();
            }
            if (e.committedAdmitted() && e.permits() > 0) {
                assertThat(e.step().admitted().windowStart()).isEqualTo(start);
                long total = admittedPerWindow.merge(start, e.permits(), Long::sum);
                assertThat(total).as("admitted in window %d", start).isLessThanOrEqualTo(limit.limit());
            }
            assertThat(ops.get(i).permits()).isEqualTo(e.permits());
        }
    }
}
