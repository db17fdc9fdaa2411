package io.sluice.internal.algorithm;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Tuple;

/** Shared helpers of the window and concurrency algorithm tests (fixed, sliding log/window, rolling, concurrency). */
final class WindowAlgorithmsSupport {

    /** One second in microseconds. */
    static final long SEC = 1_000_000;

    private WindowAlgorithmsSupport() {}

    static Duration micros(long micros) {
        return Duration.ofNanos(micros * 1_000);
    }

    static Duration seconds(long seconds) {
        return Duration.ofSeconds(seconds);
    }

    /**
     * One request of a random run: how far the clock moves first, the permits asked for, whether another limit
     * of the rule rejects (so the store commits {@code rejected} even if this step admits), and whether the
     * store drops an expired state before the request.
     */
    record Op(long advance, long permits, boolean ruleRejects, boolean storeDrops) {}

    /** A limit, a start time and the requests to apply from there. */
    record Scenario<L>(L limit, long start, List<Op> ops) {}

    /** Scenarios whose requests fit each limit: {@code ops} builds the request list for a given limit. */
    static <L> Arbitrary<Scenario<L>> scenarios(Arbitrary<L> limits, Arbitrary<Long> starts,
                                                Function<L, Arbitrary<List<Op>>> ops) {
        return limits.flatMap(limit -> Combinators.combine(starts, ops.apply(limit))
                .as((start, list) -> new Scenario<>(limit, start, list)));
    }

    /** Requests with bursts in the same microsecond, small steps and the occasional long pause. */
    static Arbitrary<List<Op>> ops(long typicalAdvance, long pause, long maxPermits, int maxSize) {
        Arbitrary<Long> advance = Arbitraries.frequencyOf(
                Tuple.of(4, Arbitraries.just(0L)),
                Tuple.of(6, Arbitraries.longs().between(1, Math.max(1, typicalAdvance))),
                Tuple.of(1, Arbitraries.longs().between(1, Math.max(1, pause))));
        Arbitrary<Long> permits = Arbitraries.frequencyOf(
                Tuple.of(1, Arbitraries.just(0L)),
                Tuple.of(8, Arbitraries.longs().between(1, maxPermits)),
                Tuple.of(1, Arbitraries.just(maxPermits)));
        Arbitrary<Op> op = Combinators.combine(advance, permits,
                        Arbitraries.integers().between(0, 9), Arbitraries.of(true, false))
                .as((a, p, r, d) -> new Op(a, p, r == 0, d));
        return op.list().ofMinSize(1).ofMaxSize(maxSize);
    }

    /** One request of a run as it happened: when, how many permits, the step, and whether the store admitted. */
    record Event<S>(long time, long permits, Step<S> step, boolean committedAdmitted) {}

    /**
     * Applies {@code ops} from {@code start} with the store's commit rule, checking the SPI contract and the
     * exactness of {@code expiresAt} at every step. With {@code backwards}, every fifth kind of advance moves
     * the clock back instead (then retry-after is measured from the state's time, not checked from now).
     */
    static <S> List<Event<S>> run(Algorithm<S> algorithm, long start, List<Op> ops, boolean recordsRejected,
                                  boolean backwards) {
        List<Event<S>> events = new ArrayList<>();
        S state = null;
        long now = start;
        for (Op op : ops) {
            boolean back = backwards && op.advance() % 5 == 1;
            now = back ? Math.max(0, now - op.advance()) : Math.min(Arith.MAX_TIME, now + op.advance());
            if (op.storeDrops() && state != null && now >= algorithm.expiresAt(state)) {
                state = null;
            }
            Step<S> step = algorithm.step(state, now, op.permits(), 0);
            checkContract(algorithm, state, now, op.permits(), step, recordsRejected, !backwards);
            S next = committed(step, op);
            long second = Math.min(algorithm.limit().maxPermits(), op.permits() / 2 + 1);
            checkExpiry(algorithm, next, now, op.advance() % 7, op.permits(), second);
            events.add(new Event<>(now, op.permits(), step, step.allowed() && !op.ruleRejects()));
            state = next;
        }
        return events;
    }

    /** The state a store keeps after {@code step}: {@code admitted} if the whole rule admits, else {@code rejected}. */
    static <S> S committed(Step<S> step, Op op) {
        return step.allowed() && !op.ruleRejects() ? step.admitted() : step.rejected();
    }

    /**
     * The SPI contract every step must meet: signs, the allowed/rejected shape, an unchanged {@code rejected}
     * state unless the algorithm records attempts, {@code grantable} agreeing with {@code step}, and a
     * retry-after that is exact (the same request passes then, and not one microsecond earlier).
     */
    static <S> void checkContract(Algorithm<S> algorithm, S state, long now, long permits, Step<S> step,
                                  boolean recordsRejected, boolean exactRetry) {
        assertThat(step.waitMicros()).isZero();
        assertThat(step.remaining()).isNotNegative();
        assertThat(step.retryAfterMicros()).isNotNegative();
        assertThat(step.resetAfterMicros()).isNotNegative();
        if (permits == 0) {
            assertThat(step.allowed()).as("an inspection always passes").isTrue();
            assertThat(step.admitted()).as("an inspection changes nothing").isEqualTo(state);
        }
        if (step.allowed()) {
            assertThat(step.retryAfterMicros()).isZero();
            if (permits > 0) {
                assertThat(step.admitted()).isNotNull();
            }
        } else {
            assertThat(step.admitted()).isNull();
            assertThat(step.retryAfterMicros()).isPositive();
        }
        if (!step.allowed() && exactRetry && step.retryAfterMicros() == Arith.NEVER) {
            assertThat(algorithm.step(step.rejected(), Arith.MAX_TIME, permits, 0).allowed())
                    .as("never passes").isFalse();
        } else if (!step.allowed() && exactRetry) {
            S after = step.rejected();
            assertThat(algorithm.step(after, now + step.retryAfterMicros(), permits, 0).allowed())
                    .as("passes after retry-after %d", step.retryAfterMicros()).isTrue();
            assertThat(algorithm.step(after, now + step.retryAfterMicros() - 1, permits, 0).allowed())
                    .as("rejected 1us before retry-after %d", step.retryAfterMicros()).isFalse();
        }
        if (!recordsRejected) {
            assertThat(step.rejected()).isEqualTo(state);
        }
        checkGrantable(algorithm, state, now, permits);
        checkGrantable(algorithm, state, now, algorithm.limit().maxPermits() * 2);
    }

    private static <S> void checkGrantable(Algorithm<S> algorithm, S state, long now, long permits) {
        long granted = algorithm.grantable(state, now, permits);
        assertThat(granted).isBetween(0L, permits);
        long max = algorithm.limit().maxPermits();
        assertThat(algorithm.step(state, now, Math.min(granted, max), 0).allowed()).isTrue();
        if (granted < Math.min(permits, max)) {
            assertThat(algorithm.step(state, now, granted + 1, 0).allowed())
                    .as("grantable %d is the largest", granted).isFalse();
        }
    }

    /**
     * {@code expiresAt} is exact: from it on the state decides like no state (checked for two requests in a
     * row) and an admission leaves the same state as from no state, and one microsecond earlier some inspection
     * or request still tells them apart.
     */
    static <S> void checkExpiry(Algorithm<S> algorithm, S state, long now, long later, long first, long second) {
        if (state == null) {
            return;
        }
        long expiresAt = algorithm.expiresAt(state);
        long at = Math.max(expiresAt, now) + later;
        Step<S> kept = algorithm.step(state, at, first, 0);
        Step<S> dropped = algorithm.step(null, at, first, 0);
        assertThat(observable(kept)).as("at %d, expiresAt %d", at, expiresAt).isEqualTo(observable(dropped));
        if (kept.allowed() && first > 0) {
            // Not only the same answer: the same state, or a clock stepping back could tell them apart (and a
            // store that dropped the state from one that did not).
            assertThat(kept.admitted()).as("admitted at %d, expiresAt %d", at, expiresAt)
                    .isEqualTo(dropped.admitted());
        }
        S keptNext = kept.allowed() ? kept.admitted() : kept.rejected();
        S droppedNext = dropped.allowed() ? dropped.admitted() : dropped.rejected();
        assertThat(observable(algorithm.step(keptNext, at + later, second, 0)))
                .isEqualTo(observable(algorithm.step(droppedNext, at + later, second, 0)));
        if (expiresAt - 1 >= now) {
            boolean differs = !observable(algorithm.step(state, expiresAt - 1, 0, 0))
                    .equals(observable(algorithm.step(null, expiresAt - 1, 0, 0)))
                    || !observable(algorithm.step(state, expiresAt - 1, 1, 0))
                    .equals(observable(algorithm.step(null, expiresAt - 1, 1, 0)));
            assertThat(differs).as("state still matters 1us before expiresAt %d", expiresAt).isTrue();
        }
    }

    /** What a caller sees of a step. */
    static List<Long> observable(Step<?> step) {
        return List.of(step.allowed() ? 1L : 0L, step.waitMicros(), step.remaining(), step.retryAfterMicros(),
                step.resetAfterMicros(), step.lease());
    }

    /** Asserts what a caller sees: verdict, remaining, retry-after and reset-after. */
    static void assertStep(Step<?> step, boolean allowed, long remaining, long retryAfter, long resetAfter) {
        assertThat(List.of(step.allowed(), step.remaining(), step.retryAfterMicros(), step.resetAfterMicros()))
                .as("allowed, remaining, retryAfter, resetAfter")
                .isEqualTo(List.of(allowed, remaining, retryAfter, resetAfter));
        assertThat(step.waitMicros()).isZero();
        if (!allowed) {
            assertThat(step.admitted()).isNull();
        }
    }
}
