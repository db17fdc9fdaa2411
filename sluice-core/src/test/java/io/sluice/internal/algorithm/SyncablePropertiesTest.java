package io.sluice.internal.algorithm;

import static io.sluice.internal.algorithm.WindowAlgorithmsSupport.SEC;
import static io.sluice.internal.algorithm.WindowAlgorithmsSupport.micros;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.FixedWindow;
import io.sluice.FixedWindow.Align;
import io.sluice.Limit;
import io.sluice.SlidingWindow;
import java.math.BigInteger;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import org.junit.jupiter.api.Test;

/**
 * {@link SyncableAlgorithm#absorb} for {@code fixed_window} and {@code sliding_window}: random runs that mix
 * local requests with permits admitted elsewhere and arriving late, in any order, checked against the model
 * "permits admitted per aligned window" and against the rules every absorb must keep.
 */
class SyncablePropertiesTest {

    /**
     * One event of a run: the clock moves by {@code advance}, then either a local request for {@code permits}
     * is stepped (and committed when admitted), or {@code permits} admitted elsewhere {@code lag} microseconds
     * ago arrive and are absorbed.
     */
    record Event(long advance, boolean absorb, long permits, long lag) {}

    /** A limit, a start time and its events. */
    record Run<L>(L limit, long start, List<Event> events) {}

    private static Arbitrary<List<Event>> events(long window, long limit) {
        Arbitrary<Long> advance = Arbitraries.frequencyOf(
                Tuple.of(3, Arbitraries.just(0L)),
                Tuple.of(6, Arbitraries.longs().between(1, Math.max(1, window / 3))),
                Tuple.of(1, Arbitraries.longs().between(1, 3 * window)));
        Arbitrary<Long> permits = Arbitraries.frequencyOf(
                Tuple.of(1, Arbitraries.just(0L)),
                Tuple.of(8, Arbitraries.longs().between(1, limit)),
                Tuple.of(1, Arbitraries.longs().between(limit, 3 * limit)));
        Arbitrary<Long> lag = Arbitraries.frequencyOf(
                Tuple.of(2, Arbitraries.just(0L)),
                Tuple.of(6, Arbitraries.longs().between(0, window)),
                Tuple.of(2, Arbitraries.longs().between(0, 3 * window)),
                Tuple.of(1, Arbitraries.longs().between(-window, -1))); // a node whose clock runs ahead
        return Combinators.combine(advance, Arbitraries.of(true, false), permits, lag).as(Event::new)
                .list().ofMinSize(1).ofMaxSize(60);
    }

    @Provide
    Arbitrary<Run<FixedWindow>> fixed() {
        Arbitrary<FixedWindow> limits = Combinators.combine(Arbitraries.longs().between(1, 12),
                        Arbitraries.longs().between(1, 300), Arbitraries.of(Align.class), Arbitraries.of(true, false))
                .as((limit, window, align, countRejected) -> FixedWindow.of(limit, micros(window)).withAlign(align)
                        .withCountRejected(countRejected));
        return limits.flatMap(l -> Combinators.combine(Arbitraries.longs().between(0, 5_000),
                events(Arith.micros(l.window()), l.limit())).as((start, events) -> new Run<>(l, start, events)));
    }

    @Provide
    Arbitrary<Run<FixedWindow>> fixedEpoch() {
        return fixed().filter(r -> r.limit().align() == Align.EPOCH);
    }

    @Provide
    Arbitrary<Run<SlidingWindow>> sliding() {
        Arbitrary<SlidingWindow> limits = Combinators.combine(Arbitraries.longs().between(1, 15),
                        Arbitraries.longs().between(1, 300))
                .as((limit, window) -> SlidingWindow.of(limit, micros(window)));
        return limits.flatMap(l -> Combinators.combine(Arbitraries.longs().between(0, 5_000),
                events(Arith.micros(l.window()), l.limit())).as((start, events) -> new Run<>(l, start, events)));
    }

    // ------------------------------------------------------------------------------------------ the models

    /** With EPOCH windows the count is exactly what was admitted (here or elsewhere) in the current window. */
    @Property(tries = 400)
    void anEpochWindowCountsWhatWasAdmittedInItInAnyOrderOfArrival(@ForAll("fixedEpoch") Run<FixedWindow> r) {
        FixedWindowAlgorithm algorithm = new FixedWindowAlgorithm(r.limit());
        long window = Arith.micros(r.limit().window());
        Map<Long, Long> admitted = new HashMap<>();
        run(algorithm, r, (state, now, e, step) -> {
            long start = now - now % window;
            if (e.absorb()) {
                long at = Math.min(admittedAt(now, e), now);
                if (at - at % window == start) {
                    admitted.merge(start, e.permits(), Long::sum);
                }
            } else if (e.permits() > 0 && (step.allowed() || r.limit().countRejected())) {
                admitted.merge(start, e.permits(), Long::sum);
            }
            return admitted;
        }, (state, now) -> {
            long start = now - now % window;
            long expected = Math.min(FixedWindowAlgorithm.COUNT_CEILING, admitted.getOrDefault(start, 0L));
            long count = state != null && now - state.windowStart() < window ? state.count() : 0;
            assertThat(count).as("count at %d", now).isEqualTo(expected);
        });
    }

    /** The estimate reads exactly the permits admitted (here or elsewhere) in the current and previous windows. */
    @Property(tries = 400)
    void theSlidingEstimateCountsWhatWasAdmittedInAnyOrderOfArrival(@ForAll("sliding") Run<SlidingWindow> r) {
        SlidingWindowAlgorithm algorithm = new SlidingWindowAlgorithm(r.limit());
        long window = Arith.micros(r.limit().window());
        Map<Long, Long> admitted = new HashMap<>();
        run(algorithm, r, (state, now, e, step) -> {
            long start = now - now % window;
            if (state == null) {
                // No state, or an expired one (the run drops it, as stores do): the earlier windows' counts
                // weigh nothing now and are forgotten with it (see the essay).
                admitted.keySet().removeIf(w -> w < start);
            }
            if (e.absorb()) {
                long at = Math.min(admittedAt(now, e), now);
                long from = at - at % window;
                if (from == start || from == start - window) {
                    admitted.merge(from, e.permits(), Long::sum);
                }
            } else if (e.permits() > 0 && step.allowed()) {
                admitted.merge(start, e.permits(), Long::sum);
            }
            return admitted;
        }, (state, now) -> {
            long start = now - now % window;
            long previous = admitted.getOrDefault(start - window, 0L);
            long current = admitted.getOrDefault(start, 0L);
            long[] seen = seen(algorithm, state, now, window);
            assertThat(estimate(seen[0], seen[1], now - start, window)).as("estimate at %d", now)
                    .isEqualTo(estimate(previous, current, now - start, window));
            assertThat(seen[1]).as("current count at %d", now).isEqualTo(current);
        });
    }

    /** (previous, current) as the state weighs them at now: rolled, and zero once expired. */
    private static long[] seen(SlidingWindowAlgorithm a, SlidingWindowAlgorithm.State s, long now, long window) {
        long start = now - now % window;
        if (s == null || now >= a.expiresAt(s)) {
            return new long[] {0, 0};
        }
        if (s.windowStart() == start) {
            return new long[] {s.previous(), s.current()};
        }
        return s.windowStart() == start - window ? new long[] {s.current(), 0} : new long[] {0, 0};
    }

    private static long estimate(long previous, long current, long elapsed, long window) {
        return BigInteger.valueOf(previous).multiply(BigInteger.valueOf(window - elapsed))
                .divide(BigInteger.valueOf(window)).longValueExact() + current;
    }

    // ------------------------------------------------------------------------------------------ the rules

    @Property(tries = 300)
    void fixedWindowKeepsTheRulesOfAbsorb(@ForAll("fixed") Run<FixedWindow> r) {
        run(new FixedWindowAlgorithm(r.limit()), r, (s, now, e, step) -> null, (s, now) -> {});
    }

    @Property(tries = 300)
    void slidingWindowKeepsTheRulesOfAbsorb(@ForAll("sliding") Run<SlidingWindow> r) {
        run(new SlidingWindowAlgorithm(r.limit()), r, (s, now, e, step) -> null, (s, now) -> {});
    }

    /** Observes each event (with the state before it) for a model. */
    interface Model<S> {
        Object apply(S before, long now, Event e, Step<S> localStep);
    }

    /** Checks the state after each event against a model. */
    interface Check<S> {
        void check(S state, long now);
    }

    /**
     * Plays the run and checks, at every event, the rules every absorb keeps:
     * <ul>
     *   <li>nothing changes from {@code absorbableUntil(admittedAt)} on, nor for zero permits (the same state);
     *   <li>before it, permits in the window of now (or, sliding, the previous one) are counted: the state changes
     *       unless the counts are saturated or (fixed, first request) the rule drops them with the expired window;
     *   <li>absorbing never turns a rejection into an admission, and never raises remaining;
     *   <li>absorbing permits admitted now is charging them: equal to the admitted state of an admitting step;
     *   <li>counts stay within the saturation ceiling, and the state's fields read back.
     * </ul>
     */
    private static <L extends Limit, S> void run(SyncableAlgorithm<S> algorithm, Run<L> r, Model<S> model,
                                                 Check<S> check) {
        long now = r.start();
        S state = null;
        for (Event e : r.events()) {
            now = Math.min(Arith.MAX_TIME, now + e.advance());
            if (state != null && now >= algorithm.expiresAt(state)) {
                // Stores drop an expired state before deciding or absorbing; it means no state anyway.
                assertThat(algorithm.absorb(state, now, 1, now)).isEqualTo(algorithm.absorb(null, now, 1, now));
                state = null;
            }
            if (e.absorb()) {
                long admittedAt = admittedAt(now, e);
                S after = algorithm.absorb(state, now, e.permits(), admittedAt);
                long at = Math.min(admittedAt, now);
                if (e.permits() == 0 || now >= algorithm.absorbableUntil(at)) {
                    assertThat(after).as("nothing absorbed at %d from %d", now, at).isSameAs(state);
                }
                for (long q : new long[] {1, algorithm.limit().maxPermits()}) {
                    Step<S> before = algorithm.step(state, now, q, 0);
                    Step<S> then = algorithm.step(after, now, q, 0);
                    if (then.allowed()) {
                        assertThat(before.allowed()).as("absorbing admits nothing new, at %d", now).isTrue();
                    }
                }
                assertThat(algorithm.step(after, now, 0, 0).remaining())
                        .isLessThanOrEqualTo(algorithm.step(state, now, 0, 0).remaining());
                if (after != null) {
                    assertThat(algorithm.state(algorithm.fields(after))).isEqualTo(after);
                    for (int i = 1; i < algorithm.fields(after).length; i++) {
                        assertThat(algorithm.fields(after)[i]).isBetween(0L, Limit.MAX_COUNT + 1);
                    }
                }
                model.apply(state, now, e, null);
                state = after;
            } else {
                Step<S> step = algorithm.step(state, now, e.permits(), 0);
                if (step.allowed() && e.permits() > 0) {
                    assertThat(algorithm.absorb(state, now, e.permits(), now))
                            .as("absorbing %d admitted now (%d) is charging them", e.permits(), now)
                            .isEqualTo(step.admitted());
                }
                model.apply(state, now, e, step);
                state = step.allowed() ? step.admitted() : step.rejected();
            }
            check.check(state, now);
        }
    }

    /** When the permits of an absorb event were admitted: lag before now, within the clock. */
    private static long admittedAt(long now, Event e) {
        return Math.max(0, Math.min(Arith.MAX_TIME, now - e.lag()));
    }

    // ------------------------------------------------------------------------------------------ examples

    @Test
    void fixedWindowExamples() {
        FixedWindowAlgorithm epoch = new FixedWindowAlgorithm(FixedWindow.of(3, Duration.ofSeconds(10)));
        var s = epoch.absorb(null, 12 * SEC, 2, 11 * SEC);
        assertThat(s).isEqualTo(new FixedWindowAlgorithm.State(10 * SEC, 2));
        assertThat(epoch.absorb(s, 13 * SEC, 5, 10 * SEC)).as("counted whatever the limit")
                .isEqualTo(new FixedWindowAlgorithm.State(10 * SEC, 7));
        assertThat(epoch.absorb(s, 13 * SEC, 5, 9 * SEC)).as("its window [0, 10 s) is over").isSameAs(s);
        assertThat(epoch.absorb(s, 20 * SEC, 1, 19 * SEC)).as("[10 s, 20 s) is over at 20 s").isSameAs(s);
        assertThat(epoch.absorb(s, 21 * SEC, 1, 20 * SEC)).as("the next window starts afresh")
                .isEqualTo(new FixedWindowAlgorithm.State(20 * SEC, 1));
        assertThat(epoch.absorb(s, 13 * SEC, 1, 15 * SEC)).as("admitted 'later' than now: counted now")
                .isEqualTo(new FixedWindowAlgorithm.State(10 * SEC, 3));
        assertThat(epoch.absorbableUntil(11 * SEC)).isEqualTo(20 * SEC);
        var saturated = epoch.absorb(epoch.absorb(null, 0, Limit.MAX_COUNT + 1, 0), 0, Limit.MAX_COUNT + 1, 0);
        assertThat(saturated.count()).isEqualTo(FixedWindowAlgorithm.COUNT_CEILING);

        FixedWindowAlgorithm first = new FixedWindowAlgorithm(FixedWindow.of(3, Duration.ofSeconds(10))
                .withAlign(Align.FIRST_REQUEST));
        var opened = first.absorb(null, 14 * SEC, 1, 12 * SEC);
        assertThat(opened).as("opens the window at the admission").isEqualTo(new FixedWindowAlgorithm.State(12 * SEC, 1));
        assertThat(first.absorb(opened, 14 * SEC, 1, 11 * SEC)).as("before the open window: charged to it")
                .isEqualTo(new FixedWindowAlgorithm.State(12 * SEC, 2));
        assertThat(first.absorb(opened, 23 * SEC, 1, 20 * SEC)).as("in the window that is over at 23 s: dropped")
                .isSameAs(opened);
        assertThat(first.absorb(opened, 23 * SEC, 1, 22 * SEC)).as("after it: opens the next one")
                .isEqualTo(new FixedWindowAlgorithm.State(22 * SEC, 1));
        assertThat(first.absorbableUntil(12 * SEC)).isEqualTo(22 * SEC);
    }

    @Test
    void slidingWindowExamples() {
        SlidingWindowAlgorithm w = new SlidingWindowAlgorithm(SlidingWindow.of(7, Duration.ofSeconds(60)));
        var s = new SlidingWindowAlgorithm.State(120 * SEC, 5, 3);
        assertThat(w.absorb(s, 138 * SEC, 2, 130 * SEC)).isEqualTo(new SlidingWindowAlgorithm.State(120 * SEC, 5, 5));
        assertThat(w.absorb(s, 138 * SEC, 2, 110 * SEC)).as("the previous window, which the estimate weighs")
                .isEqualTo(new SlidingWindowAlgorithm.State(120 * SEC, 7, 3));
        assertThat(w.absorb(s, 138 * SEC, 2, 59 * SEC)).as("two windows back: dropped").isSameAs(s);
        var rolled = w.absorb(s, 190 * SEC, 4, 170 * SEC);
        assertThat(rolled).as("a window later: current becomes previous")
                .isEqualTo(new SlidingWindowAlgorithm.State(180 * SEC, 3 + 4, 0));
        assertThat(w.expiresAt(rolled)).as("a previous-only state expires as the essay says")
                .isEqualTo(180 * SEC + 60 * SEC + 1 - (60 * SEC + 6) / 7);
        assertThat(w.absorbableUntil(110 * SEC)).isEqualTo(180 * SEC);
    }

    @Test
    void badStatesAreRefusedNamingTheShape() {
        FixedWindowAlgorithm fixed = new FixedWindowAlgorithm(FixedWindow.of(3, Duration.ofSeconds(10)));
        assertThatThrownBy(() -> fixed.state(new long[] {1})).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("(windowStart, count >= 0)");
        SlidingWindowAlgorithm sliding = new SlidingWindowAlgorithm(SlidingWindow.of(3, Duration.ofSeconds(10)));
        assertThatThrownBy(() -> sliding.state(new long[] {1, -1, 0})).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("previous >= 0");
    }
}
