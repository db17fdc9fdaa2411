package io.sluice.internal.algorithm;

import io.sluice.Limit;
import io.sluice.TokenBucket;
import io.sluice.TokenBucket.Refill;
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
 * {@link TokenBucketInPlace} decides and writes exactly what {@link TokenBucketAlgorithm#step} does, in every
 * refill style, with initial tokens below capacity (keys that never expire and record their creation) or not
 * (see {@link InPlaceRun}).
 */
class TokenBucketInPlacePropertiesTest {

    @Provide
    Arbitrary<TokenBucket> buckets() {
        Arbitrary<Long> capacity = Arbitraries.longs().between(1, 20);
        Arbitrary<Long> refill = Arbitraries.longs().between(1, 12);
        Arbitrary<Long> period = Arbitraries.frequencyOf(
                Tuple.of(1, Arbitraries.longs().between(1, 10)),
                Tuple.of(3, Arbitraries.longs().between(11, 2_000_000)),
                Tuple.of(1, Arbitraries.of(1_000L, 60_000L, 1_000_000L)));
        Arbitrary<Refill> style = Arbitraries.of(Refill.class);
        Arbitrary<Long> initial = Arbitraries.longs().between(-10, 20);
        return Combinators.combine(capacity, refill, period, style, initial).as((c, r, p, s, i) ->
                new TokenBucket("tb", c, r, Duration.ofNanos(p * 1_000), s, i < 0 ? c : Math.min(i, c)));
    }

    @Provide
    Arbitrary<TokenBucket> extremeBuckets() {
        Arbitrary<Long> counts = Arbitraries.of(1L, 3L, 1_000_000L, Limit.MAX_COUNT);
        Arbitrary<Duration> period = Arbitraries.of(Duration.ofNanos(1_000), Duration.ofSeconds(1), Duration.ofDays(1),
                Limit.MAX_DURATION);
        return Combinators.combine(counts, counts, period, Arbitraries.of(Refill.class), Arbitraries.of(0L, 1L, -1L))
                .as(TokenBucketInPlacePropertiesTest::bucketOrNull).filter(Objects::nonNull);
    }

    /** Permits up to past the capacity: a request that can never pass is decided too. */
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

    @Property(tries = 600)
    void inPlaceStepsAsThePureStep(@ForAll("buckets") TokenBucket limit,
                                   @ForAll("operations") List<InPlaceRun.Op> ops,
                                   @ForAll @LongRange(max = 1L << 40) long start) {
        InPlaceRun.assertSameAsPure(new TokenBucketAlgorithm(limit), ops, start);
    }

    @Property(tries = 300)
    void inPlaceStepsAsThePureStepAtTheEdgesOfTime(@ForAll("extremeBuckets") TokenBucket limit,
                                                   @ForAll("extremeOperations") List<InPlaceRun.Op> ops,
                                                   @ForAll("starts") long start) {
        InPlaceRun.assertSameAsPure(new TokenBucketAlgorithm(limit), ops, start);
    }

    /** A bucket of those parameters (initial: 0, 1, or -1 for the capacity), or null when they are refused. */
    private static TokenBucket bucketOrNull(long capacity, long refill, Duration period, Refill style, long initial) {
        try {
            return new TokenBucket("tb", capacity, refill, period, style, initial < 0 ? capacity : initial);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }
}
