package io.sluice.internal.algorithm;

import io.sluice.Gcra;
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

/** {@link GcraInPlace} decides and writes exactly what {@link GcraAlgorithm#step} does (see {@link InPlaceRun}). */
class GcraInPlacePropertiesTest {

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
    Arbitrary<Gcra> extremeLimits() {
        Arbitrary<Long> limit = Arbitraries.of(1L, 3L, 1_000_000L, Limit.MAX_COUNT);
        Arbitrary<Duration> period = Arbitraries.of(Duration.ofNanos(1_000), Duration.ofSeconds(1), Duration.ofDays(1),
                Limit.MAX_DURATION);
        Arbitrary<Long> burst = Arbitraries.of(1L, 2L, 1_000L, Limit.MAX_COUNT);
        return Combinators.combine(limit, period, burst).as(GcraInPlacePropertiesTest::gcraOrNull)
                .filter(Objects::nonNull);
    }

    /** Permits up to past the largest burst: a request that can never conform is decided too. */
    @Provide
    Arbitrary<List<InPlaceRun.Op>> operations() {
        return InPlaceRun.operations(Arbitraries.longs().between(0, 25));
    }

    @Provide
    Arbitrary<List<InPlaceRun.Op>> extremeOperations() {
        return InPlaceRun.operations(Arbitraries.of(0L, 1L, 2L, 1_000L, Limit.MAX_COUNT));
    }

    @Property(tries = 500)
    void inPlaceStepsAsThePureStep(@ForAll("limits") Gcra limit, @ForAll("operations") List<InPlaceRun.Op> ops,
                                   @ForAll @LongRange(max = 1L << 40) long start) {
        InPlaceRun.assertSameAsPure(new GcraAlgorithm(limit), ops, start);
    }

    @Property(tries = 300)
    void inPlaceStepsAsThePureStepAtTheEdgesOfTime(@ForAll("extremeLimits") Gcra limit,
                                                   @ForAll("extremeOperations") List<InPlaceRun.Op> ops,
                                                   @ForAll("starts") long start) {
        InPlaceRun.assertSameAsPure(new GcraAlgorithm(limit), ops, start);
    }

    @Provide
    Arbitrary<Long> starts() {
        return Arbitraries.oneOf(Arbitraries.of(0L, Arith.MAX_TIME - 1, Arith.MAX_TIME),
                Arbitraries.longs().between(0, Arith.MAX_TIME));
    }

    private static Gcra gcraOrNull(long limit, Duration period, long burst) {
        try {
            return new Gcra("gcra", limit, period, burst);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }
}
