package io.sluice.internal.algorithm;

import static io.sluice.internal.algorithm.WindowAlgorithmsSupport.micros;
import static io.sluice.internal.algorithm.WindowAlgorithmsSupport.ops;
import static io.sluice.internal.algorithm.WindowAlgorithmsSupport.run;
import static io.sluice.internal.algorithm.WindowAlgorithmsSupport.scenarios;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Limit;
import io.sluice.SlidingLog;
import io.sluice.internal.algorithm.SlidingLogAlgorithm.State;
import io.sluice.internal.algorithm.WindowAlgorithmsSupport.Event;
import io.sluice.internal.algorithm.WindowAlgorithmsSupport.Scenario;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

class SlidingLogPropertiesTest {

    @Provide
    Arbitrary<Scenario<SlidingLog>> small() {
        Arbitrary<SlidingLog> limits = Combinators.combine(
                        Arbitraries.longs().between(1, 12), Arbitraries.longs().between(1, 300),
                        Arbitraries.integers().between(0, 100), Arbitraries.of(true, false))
                .as((limit, window, gapPercent, countRejected) -> SlidingLog.of(limit, micros(window))
                        .withMinGap(micros(gapPercent < 50 ? 0 : window * gapPercent / 100))
                        .withCountRejected(countRejected));
        return scenarios(limits, Arbitraries.longs().between(0, 5_000),
                l -> ops(Arith.micros(l.window()) / 5, Arith.micros(l.window()) * 2, l.limit(), 60));
    }

    @Provide
    Arbitrary<Scenario<SlidingLog>> huge() {
        long longest = Arith.micros(Limit.MAX_DURATION);
        Arbitrary<SlidingLog> limits = Combinators.combine(
                        Arbitraries.longs().between(SlidingLog.MAX_LOG - 3, SlidingLog.MAX_LOG),
                        Arbitraries.longs().between(longest - 1_000, longest), Arbitraries.of(true, false))
                .as((limit, window, countRejected) -> SlidingLog.of(limit, micros(window))
                        .withMinGap(micros(window / 7)).withCountRejected(countRejected));
        return scenarios(limits, Arbitraries.longs().between(Arith.MAX_TIME - 3 * longest, Arith.MAX_TIME),
                l -> ops(Arith.micros(l.window()) / 4, Arith.micros(l.window()) * 2, l.limit(), 30));
    }

    /**
     * Decides exactly like an unbounded log of every recorded permit (ClassDojo's semantics), keeps at most
     * {@code limit} permits, and admits at most {@code limit} in every half-open interval of length W.
     */
    @Property(tries = 400)
    void matchesAnUnboundedLogAndNeverExceedsTheLimitInAnyWindow(@ForAll("small") Scenario<SlidingLog> s) {
        SlidingLogAlgorithm algorithm = new SlidingLogAlgorithm(s.limit());
        checkAgainstModel(s.limit(), run(algorithm, s.start(), s.ops(), s.limit().countRejected(), false));
    }

    @Property(tries = 150)
    void noOverflowNearMaxTimeWithTheLargestLogs(@ForAll("huge") Scenario<SlidingLog> s) {
        SlidingLogAlgorithm algorithm = new SlidingLogAlgorithm(s.limit());
        checkAgainstModel(s.limit(), run(algorithm, s.start(), s.ops(), s.limit().countRejected(), false));
    }

    @Property(tries = 200)
    void clockGoingBackwardsKeepsEverythingNonNegative(@ForAll("small") Scenario<SlidingLog> s) {
        run(new SlidingLogAlgorithm(s.limit()), s.start(), s.ops(), s.limit().countRejected(), true);
    }

    private static void checkAgainstModel(SlidingLog limit, List<Event<State>> events) {
        long window = Arith.micros(limit.window());
        long gap = Arith.micros(limit.minGap());
        List<long[]> recorded = new ArrayList<>();
        List<long[]> admitted = new ArrayList<>();
        for (Event<State> e : events) {
            long t = e.time();
            long inWindow = permitsIn(recorded, t - window + 1, t);
            boolean gapOver = gap == 0 || recorded.isEmpty() || t - recorded.get(recorded.size() - 1)[0] >= gap;
            boolean allowed = e.permits() == 0 || (inWindow + e.permits() <= limit.limit() && gapOver);
            assertThat(e.step().allowed()).as("at %d for %d", t, e.permits()).isEqualTo(allowed);
            if (allowed) {
                assertThat(e.step().remaining()).isEqualTo(Math.max(0, limit.limit() - inWindow - e.permits()));
            }
            if (e.permits() > 0 && (e.committedAdmitted() || limit.countRejected())) {
                recorded.add(new long[] {t, e.permits()});
            }
            if (e.permits() > 0 && e.committedAdmitted()) {
                admitted.add(new long[] {t, e.permits()});
                assertThat(permitsIn(admitted, t - window + 1, t)).isLessThanOrEqualTo(limit.limit());
            }
            checkBounded(limit, e.step().admitted());
            checkBounded(limit, e.step().rejected());
        }
        for (long[] first : admitted) {
            assertThat(permitsIn(admitted, first[0], first[0] + window - 1))
                    .as("admitted in [%d, %d)", first[0], first[0] + window).isLessThanOrEqualTo(limit.limit());
        }
    }

    /** At most {@code limit} permits kept, times strictly increasing, every entry at least one permit. */
    private static void checkBounded(SlidingLog limit, State state) {
        if (state == null) {
            return;
        }
        long[] log = state.log();
        long total = 0;
        for (int i = 0; i < log.length; i += 2) {
            assertThat(log[i + 1]).isPositive();
            if (i > 0) {
                assertThat(log[i]).isGreaterThan(log[i - 2]);
            }
            total += log[i + 1];
        }
        assertThat(total).isLessThanOrEqualTo(limit.limit());
    }

    private static long permitsIn(List<long[]> events, long from, long to) {
        long sum = 0;
        for (long[] e : events) {
            if (e[0] >= from && e[0] <= to) {
                sum += e[1];
            }
        }
        return sum;
    }
}
