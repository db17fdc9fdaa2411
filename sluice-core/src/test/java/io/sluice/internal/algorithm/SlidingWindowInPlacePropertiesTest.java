package io.sluice.internal.algorithm;

import io.sluice.SlidingWindow;
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
 * {@link SlidingWindowInPlace} decides and writes exactly what {@link SlidingWindowAlgorithm#step} does, the
 * previous window's weight, the roll into a new window and a state expired mid-window included (see
 * {@link InPlaceRun}).
 */
class SlidingWindowInPlacePropertiesTest {

    @Provide
    Arbitrary<SlidingWindow> limits() {
        Arbitrary<Long> limit = Arbitraries.longs().between(1, 20);
        Arbitrary<Long> window = Arbitraries.frequencyOf(
                Tuple.of(1, Arbitraries.longs().between(1, 100)),
                Tuple.of(3, Arbitraries.longs().between(100, 2_000_000)),
                Tuple.of(1, Arbitraries.of(1_000_000L, 60_000_000L)));
        return Combinators.combine(limit, window).as((l, w) -> new SlidingWindow("sw", l, Duration.ofNanos(w * 1_000)));
    }

    @Provide
    Arbitrary<SlidingWindow> extremeLimits() {
        Arbitrary<Long> limit = Arbitraries.of(1L, 3L, 1_000_000L, Limit.MAX_COUNT);
        Arbitrary<Duration> window = Arbitraries.of(Duration.ofNanos(1_000), Duration.ofSeconds(1), Duration.ofDays(1),
                Limit.MAX_DURATION);
        return Combinators.combine(limit, window).as(SlidingWindowInPlacePropertiesTest::windowOrNull)
                .filter(Objects::nonNull);
    }

    /** Permits up to past the limit, cut to it by {@link #atMostTheLimit}. */
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
    void inPlaceStepsAsThePureStep(@ForAll("limits") SlidingWindow limit, @ForAll("operations") List<InPlaceRun.Op> ops,
                                   @ForAll @LongRange(max = 1L << 40) long start) {
        InPlaceRun.assertSameAsPure(new SlidingWindowAlgorithm(limit), atMostTheLimit(ops, limit), start);
    }

    @Property(tries = 300)
    void inPlaceStepsAsThePureStepAtTheEdgesOfTime(@ForAll("extremeLimits") SlidingWindow limit,
                                                   @ForAll("extremeOperations") List<InPlaceRun.Op> ops,
                                                   @ForAll("starts") long start) {
        InPlaceRun.assertSameAsPure(new SlidingWindowAlgorithm(limit), atMostTheLimit(ops, limit), start);
    }

    /** Requests of at most the limit: a rule refuses more ({@code maxPermits}) before any store sees them. */
    private static List<InPlaceRun.Op> atMostTheLimit(List<InPlaceRun.Op> ops, SlidingWindow limit) {
        return ops.stream().map(op -> new InPlaceRun.Op(op.kind(), Math.min(op.permits(), limit.maxPermits()),
                op.advance(), op.maxWait(), op.reload())).toList();
    }

    private static SlidingWindow windowOrNull(long limit, Duration window) {
        try {
            return new SlidingWindow("sw", limit, window);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }
}
