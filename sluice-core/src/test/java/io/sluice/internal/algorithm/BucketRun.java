package io.sluice.internal.algorithm;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Comparator;
import java.util.List;
import java.util.function.LongBinaryOperator;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Tuple;

/**
 * Drives one algorithm as a store with a single-limit rule would: commits {@code admitted} when the step
 * allows and {@code rejected} otherwise. Shared by the token bucket, GCRA and leaky bucket tests.
 */
final class BucketRun<S> {
    final Algorithm<S> algorithm;
    S state;

    BucketRun(Algorithm<S> algorithm) {
        this.algorithm = algorithm;
    }

    /** A try: admitted only if usable now. */
    String tryAt(long now, long permits) {
        return describe(request(now, permits, 0));
    }

    /** A reservation with an unbounded wait. */
    String reserveAt(long now, long permits) {
        return describe(request(now, permits, Long.MAX_VALUE));
    }

    Step<S> request(long now, long permits, long maxWait) {
        Step<S> step = algorithm.step(state, now, permits, maxWait);
        state = step.allowed() ? step.admitted() : step.rejected();
        return step;
    }

    /** A compact, readable verdict for timeline assertions. */
    static String describe(Step<?> step) {
        if (step.allowed()) {
            return "allow wait=" + step.waitMicros() + " remaining=" + step.remaining()
                    + " reset=" + step.resetAfterMicros();
        }
        return "reject remaining=" + step.remaining() + " retry=" + step.retryAfterMicros()
                + " reset=" + step.resetAfterMicros();
    }

    /** Every decision field except the states, for comparing two steps. */
    static String decision(Step<?> step) {
        return describe(step) + " lease=" + step.lease();
    }

    /** One request of a generated run: advance the clock, then ask for permits with this maxWait. */
    record Req(long advance, long permits, long maxWait) {}

    /** Runs of up to 60 requests: often simultaneous, tries, bounded and unbounded reservations. */
    static Arbitrary<List<Req>> requests(Arbitrary<Long> permits) {
        Arbitrary<Long> advance = Arbitraries.frequencyOf(
                Tuple.of(3, Arbitraries.just(0L)),
                Tuple.of(5, Arbitraries.longs().between(1, 200_000)),
                Tuple.of(2, Arbitraries.longs().between(1, 3_000_000)));
        Arbitrary<Long> maxWait = Arbitraries.frequencyOf(
                Tuple.of(4, Arbitraries.just(0L)),
                Tuple.of(2, Arbitraries.longs().between(1, 3_000_000)),
                Tuple.of(1, Arbitraries.just(Long.MAX_VALUE)));
        return Combinators.combine(advance, permits, maxWait).as(Req::new).list().ofMaxSize(60);
    }

    /** Runs near the end of the clock: {@code advance} is how long before MAX_TIME the request comes. */
    static Arbitrary<List<Req>> extremeRequests(Arbitrary<Long> permits) {
        Arbitrary<Long> before = Arbitraries.frequencyOf(
                Tuple.of(2, Arbitraries.just(0L)),
                Tuple.of(2, Arbitraries.longs().between(0, 100)),
                Tuple.of(1, Arbitraries.longs().between(0, Arith.MAX_TIME)));
        Arbitrary<Long> maxWait = Arbitraries.of(0L, 1L, Arith.MAX_TIME, Long.MAX_VALUE);
        return Combinators.combine(before, permits, maxWait).as(Req::new).list().ofMaxSize(30);
    }

    /** What every step must satisfy: the SPI's field rules, and a rejection commits the input unchanged. */
    static <S> void assertSane(Step<S> step, S input, long maxWait) {
        assertSane(step, input, maxWait, false);
    }

    /**
     * {@link #assertSane(Step, Object, long)}, except that with {@code recordsCreation} a rejection on no state
     * commits a state (a token_bucket with initialTokens < capacity records the key's creation).
     */
    static <S> void assertSane(Step<S> step, S input, long maxWait, boolean recordsCreation) {
        assertThat(step.remaining()).isNotNegative();
        assertThat(step.lease()).isEqualTo(-1);
        assertReportable(step.waitMicros());
        assertReportable(step.retryAfterMicros());
        assertReportable(step.resetAfterMicros());
        if (step.allowed()) {
            assertThat(step.waitMicros()).isBetween(0L, maxWait);
            assertThat(step.retryAfterMicros()).isZero();
        } else {
            if (recordsCreation && input == null) {
                assertThat(step.rejected()).isNotNull();
            } else {
                assertThat(step.rejected()).isSameAs(input);
            }
            assertThat(step.admitted()).isNull();
            assertThat(step.retryAfterMicros()).isPositive();
        }
    }

    /** A duration is within the clock's range or Long.MAX_VALUE ("never"). */
    static void assertReportable(long micros) {
        assertThat(micros).satisfiesAnyOf(
                m -> assertThat(m).isBetween(0L, Arith.MAX_TIME),
                m -> assertThat(m).isEqualTo(Long.MAX_VALUE));
    }

    /** Permits admitted for use at {@code at} (now + wait). */
    record Use(long at, long permits) {}

    /**
     * Asserts that the permits used in every window [x, y] between two use times are at most
     * {@code bound(x, y)}; O(n²) over the uses sorted by time.
     */
    static void assertWindows(List<Use> uses, LongBinaryOperator bound) {
        List<Use> sorted = uses.stream().sorted(Comparator.comparingLong(Use::at)).toList();
        for (int i = 0; i < sorted.size(); i++) {
            if (i > 0 && sorted.get(i - 1).at() == sorted.get(i).at()) {
                continue; // a window starts with the first use at its time
            }
            long used = 0;
            for (int j = i; j < sorted.size(); j++) {
                used += sorted.get(j).permits();
                if (j + 1 < sorted.size() && sorted.get(j + 1).at() == sorted.get(j).at()) {
                    continue; // and ends with the last
                }
                long x = sorted.get(i).at();
                long y = sorted.get(j).at();
                assertThat(used).as("permits used in [%d, %d]", x, y).isLessThanOrEqualTo(bound.applyAsLong(x, y));
            }
        }
    }
}
