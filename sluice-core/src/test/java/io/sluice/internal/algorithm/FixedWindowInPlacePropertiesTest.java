package io.sluice.internal.algorithm;

import io.sluice.FixedWindow;
import io.sluice.Limit;
import java.time.Duration;
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

/**
 * {@link FixedWindowInPlace} decides and writes exactly what {@link FixedWindowAlgorithm#step} does, both
 * alignments, with and without {@code countRejected} (see {@link InPlaceRun}).
 */
class FixedWindowInPlacePropertiesTest {

    @Provide
    Arbitrary<FixedWindow> limits() {
        Arbitrary<Long> limit = Arbitraries.longs().between(1, 20);
        Arbitrary<Long> window = Arbitraries.frequencyOf(
                Tuple.of(1, Arbitraries.longs().between(1, 100)),
                Tuple.of(3, Arbitraries.longs().between(100, 2_000_000)),
                Tuple.of(1, Arbitraries.of(1_000_000L, 60_000_000L)));
        return Combinators.combine(limit, window, Arbitraries.of(FixedWindow.Align.class), Arbitraries.of(true, false))
                .as((l, w, a, c) -> new FixedWindow("fw", l, Duration.ofNanos(w * 1_000), a, c));
    }

    @Provide
    Arbitrary<FixedWindow> extremeLimits() {
        Arbitrary<Long> limit = Arbitraries.of(1L, 3L, 1_000_000L, Limit.MAX_COUNT);
        Arbitrary<Duration> window = Arbitraries.of(Duration.ofNanos(1_000), Duration.ofSeconds(1), Duration.ofDays(1),
                Limit.MAX_DURATION);
        return Combinators.combine(limit, window, Arbitraries.of(FixedWindow.Align.class), Arbitraries.of(true, false))
                .as(FixedWindowInPlacePropertiesTest::windowOrNull).filter(Objects::nonNull);
    }

    /** Permits up to past the limit: a request that can never pass is decided too. */
    @Provide
    Arbitrary<List<InPlaceRun.Op>> operations() {
        return InPlaceRun.operations(Arbitraries.longs().between(0, 25));
    }

    @Provide
    Arbitrary<List<InPlaceRun.Op>> extremeOperations() {
        return InPlaceRun.operations(Arbitraries.of(0L, 1L, 2L, 1_000L, Limit.MAX_COUNT));
    }

    @Provide
    Arbitrary<Long> starts() {
        return Arbitraries.oneOf(Arbitraries.of(0L, Arith.MAX_TIME - 1, Arith.MAX_TIME),
                Arbitraries.longs().between(0, Arith.MAX_TIME));
    }

    @Property(tries = 500)
    void inPlaceStepsAsThePureStep(@ForAll("limits") FixedWindow limit, @ForAll("operations") List<InPlaceRun.Op> ops,
                                   @ForAll @LongRange(max = 1L << 40) long start) {
        InPlaceRun.assertSameAsPure(new FixedWindowAlgorithm(limit), ops, start);
    }

    @Property(tries = 300)
    void inPlaceStepsAsThePureStepAtTheEdgesOfTime(@ForAll("extremeLimits") FixedWindow limit,
                                                   @ForAll("extremeOperations") List<InPlaceRun.Op> ops,
                                                   @ForAll("starts") long start) {
        InPlaceRun.assertSameAsPure(new FixedWindowAlgorithm(limit), ops, start);
    }

    private static FixedWindow windowOrNull(long limit, Duration window, FixedWindow.Align align, boolean count) {
        try {
            return new FixedWindow("fw", limit, window, align, count);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }
}
