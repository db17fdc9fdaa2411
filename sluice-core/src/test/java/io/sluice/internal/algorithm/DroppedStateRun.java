package io.sluice.internal.algorithm;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.internal.algorithm.BucketRun.Req;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Tuple;

/**
 * Two keys of one algorithm driven by the same requests: one keeps its state whatever happens, the other loses
 * it the moment it expires, as a store may drop it (the memory store's sweep, a Redis TTL). Dropping a state
 * must be invisible, so both must decide every request alike.
 */
final class DroppedStateRun {

    private DroppedStateRun() {}

    /**
     * Runs of up to 40 requests with idle spells up to {@code longestIdle} µs among them, long enough for the
     * tested parameters to become full and expire.
     */
    static Arbitrary<List<Req>> requests(Arbitrary<Long> permits, long longestIdle) {
        Arbitrary<Long> advance = Arbitraries.frequencyOf(
                Tuple.of(3, Arbitraries.just(0L)),
                Tuple.of(4, Arbitraries.longs().between(1, 500_000)),
                Tuple.of(3, Arbitraries.longs().between(1, longestIdle)));
        Arbitrary<Long> maxWait = Arbitraries.frequencyOf(
                Tuple.of(4, Arbitraries.just(0L)),
                Tuple.of(2, Arbitraries.longs().between(1, 3_000_000)),
                Tuple.of(1, Arbitraries.just(Long.MAX_VALUE)));
        return Combinators.combine(advance, permits, maxWait).as(Req::new).list().ofMaxSize(40);
    }

    /** Asserts that the key that drops its expired state decides (and grants) every request as the one that keeps it. */
    static <S> void assertInvisible(Algorithm<S> algorithm, List<Req> requests, long start) {
        S kept = null;
        S dropped = null;
        long now = start;
        int i = 0;
        for (Req req : requests) {
            now += req.advance();
            if (dropped != null && now >= algorithm.expiresAt(dropped)) {
                dropped = null;
            }
            assertThat(algorithm.grantable(dropped, now, req.permits()))
                    .as("grantable, request %d at %d", i, now)
                    .isEqualTo(algorithm.grantable(kept, now, req.permits()));
            Step<S> keptStep = algorithm.step(kept, now, req.permits(), req.maxWait());
            Step<S> droppedStep = algorithm.step(dropped, now, req.permits(), req.maxWait());
            assertThat(BucketRun.decision(droppedStep)).as("request %d at %d: %s", i, now, req)
                    .isEqualTo(BucketRun.decision(keptStep));
            kept = keptStep.allowed() ? keptStep.admitted() : keptStep.rejected();
            dropped = droppedStep.allowed() ? droppedStep.admitted() : droppedStep.rejected();
            i++;
        }
    }
}
