package io.sluice.internal.algorithm;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Decision;
import io.sluice.Request;
import io.sluice.internal.RuleEvaluator;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Tuple;

/**
 * Runs an algorithm's {@link InPlaceStep} beside its pure step, as the memory store runs a rule of that one limit
 * (an expired state decides as no state and is kept when nothing is written; a state written already expired is
 * not kept; a peek writes nothing), and asserts
 * after every operation that the two gave equal decisions and hold the same state, expiry included.
 */
final class InPlaceRun {

    private InPlaceRun() {}

    /** One operation: a request of {@code kind} after the clock moved by {@code advance} (possibly back). */
    record Op(int kind, long permits, long advance, long maxWait, boolean reload) {}

    static final int TRY = 0;
    static final int AT_MOST = 1;
    static final int RESERVE = 2;
    static final int PEEK = 3;

    /** Random operations with permits from {@code permits}; the clock mostly moves forward, at times back. */
    static Arbitrary<List<Op>> operations(Arbitrary<Long> permits) {
        Arbitrary<Integer> kind = Arbitraries.frequencyOf(Tuple.of(6, Arbitraries.just(TRY)),
                Tuple.of(2, Arbitraries.just(AT_MOST)), Tuple.of(2, Arbitraries.just(RESERVE)),
                Tuple.of(2, Arbitraries.just(PEEK)));
        Arbitrary<Long> advance = Arbitraries.frequencyOf(
                Tuple.of(4, Arbitraries.just(0L)),
                Tuple.of(6, Arbitraries.longs().between(1, 400_000)),
                Tuple.of(1, Arbitraries.longs().between(-50_000, -1)),
                Tuple.of(1, Arbitraries.longs().between(1_000_000, 100_000_000)));
        Arbitrary<Long> maxWait = Arbitraries.frequencyOf(Tuple.of(2, Arbitraries.just(0L)),
                Tuple.of(4, Arbitraries.longs().between(1, 3_000_000)), Tuple.of(1, Arbitraries.just(Long.MAX_VALUE)));
        Arbitrary<Boolean> reload = Arbitraries.frequencyOf(Tuple.of(9, Arbitraries.just(false)),
                Tuple.of(1, Arbitraries.just(true)));
        return Combinators.combine(kind, permits, advance, maxWait, reload).as(Op::new).list().ofMinSize(1)
                .ofMaxSize(60);
    }

    static <S> void assertSameAsPure(Algorithm<S> algorithm, List<Op> ops, long start) {
        @SuppressWarnings("unchecked")
        Algorithm<Object> pure = (Algorithm<Object>) algorithm;
        @SuppressWarnings("unchecked")
        InPlaceStep<Object> inPlace = (InPlaceStep<Object>) algorithm.inPlace();
        assertThat(inPlace).isNotNull();
        StateCell cell = new StateCell();
        Object stored = null;
        long now = start;
        for (Op op : ops) {
            now = Math.min(Math.max(0, now + op.advance()), Arith.MAX_TIME);
            if (op.reload() && stored != null) {
                inPlace.load(stored, cell);   // as the store does when a key's state was written by another path
            }
            boolean live = stored != null && now < pure.expiresAt(stored);
            assertThat(now < cell.expiresAt()).as("live").isEqualTo(live);
            Object state = live ? stored : null;
            Request request = request(op);
            long permits = request.permits();
            if (request.op() == Request.Op.TRY_AT_MOST) {
                long pureGrantable = pure.grantable(state, now, permits);
                assertThat(inPlace.grantable(cell, live, now, permits)).as("grantable").isEqualTo(pureGrantable);
                assertHolds(pure, inPlace, cell, stored);
                permits = RuleEvaluator.permitsOfOne(pure, state, now, request);
            }
            long maxWait = RuleEvaluator.maxWaitOf(request);
            Step<Object> step = pure.step(state, now, permits, maxWait);
            Decision expected = RuleEvaluator.decisionOfOne(pure, step, request, permits);
            Decision actual = inPlace.step(cell, live, now, permits, maxWait, request.op() == Request.Op.PEEK);
            assertThat(actual).as("decision at %d for %s", now, op).isEqualTo(expected);
            Object next = request.op() == Request.Op.PEEK ? state : RuleEvaluator.nextOfOne(step);
            if (next != state) {
                // The store keeps no state written already expired (ImmutableStates.keepExpired).
                stored = next != null && now >= pure.expiresAt(next) ? null : next;
            }
            assertHolds(pure, inPlace, cell, stored);
        }
    }

    private static Request request(Op op) {
        return switch (op.kind()) {
            case TRY -> Request.tryAcquire(Math.max(1, op.permits()));
            case AT_MOST -> Request.tryAcquireAtMost(Math.max(1, op.permits()));
            case RESERVE -> Request.reserve(Math.max(1, op.permits()), op.maxWait());
            default -> Request.peek(op.permits());
        };
    }

    /** The cell holds {@code stored} (none when null), with its expiry. */
    private static void assertHolds(Algorithm<Object> pure, InPlaceStep<Object> inPlace, StateCell cell,
                                    Object stored) {
        if (stored == null) {
            assertThat(cell.holdsState()).as("cell holds no state").isFalse();
            return;
        }
        assertThat(inPlace.save(cell)).as("state").isEqualTo(stored);
        assertThat(cell.expiresAt()).as("expiry").isEqualTo(pure.expiresAt(stored));
    }
}
