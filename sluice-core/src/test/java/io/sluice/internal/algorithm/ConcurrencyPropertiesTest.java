package io.sluice.internal.algorithm;

import static io.sluice.internal.algorithm.WindowAlgorithmsSupport.checkContract;
import static io.sluice.internal.algorithm.WindowAlgorithmsSupport.checkExpiry;
import static io.sluice.internal.algorithm.WindowAlgorithmsSupport.micros;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Concurrency;
import io.sluice.Limit;
import io.sluice.internal.algorithm.Algorithm.Release;
import io.sluice.internal.algorithm.ConcurrencyAlgorithm.State;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;

class ConcurrencyPropertiesTest {

    /**
     * One call: after {@code advance}, either a request for {@code permits} or, when {@code release >= 0}, a
     * release of the lease at that position among those handed out so far (or of an id never handed out).
     */
    record Action(long advance, long permits, int release, boolean ruleRejects, boolean storeDrops) {}

    record Scenario(Concurrency limit, long start, List<Action> actions) {}

    @Provide
    Arbitrary<Scenario> small() {
        Arbitrary<Concurrency> limits = Combinators.combine(
                        Arbitraries.longs().between(1, 8), Arbitraries.longs().between(1, 200))
                .as((max, ttl) -> Concurrency.of(max, micros(ttl)));
        return limits.flatMap(l -> Combinators.combine(Arbitraries.longs().between(0, 5_000),
                        actions(Arith.micros(l.leaseTtl()), l.maxConcurrent(), 80))
                .as((start, actions) -> new Scenario(l, start, actions)));
    }

    @Provide
    Arbitrary<Scenario> huge() {
        long longest = Arith.micros(Limit.MAX_DURATION);
        Arbitrary<Concurrency> limits = Combinators.combine(
                        Arbitraries.longs().between(Concurrency.MAX_LEASES - 3, Concurrency.MAX_LEASES),
                        Arbitraries.longs().between(longest - 1_000, longest))
                .as((max, ttl) -> Concurrency.of(max, micros(ttl)));
        return limits.flatMap(l -> Combinators.combine(
                        Arbitraries.longs().between(Arith.MAX_TIME - 3 * longest, Arith.MAX_TIME),
                        actions(Arith.micros(l.leaseTtl()), l.maxConcurrent(), 40))
                .as((start, actions) -> new Scenario(l, start, actions)));
    }

    private static Arbitrary<List<Action>> actions(long ttl, long max, int size) {
        Arbitrary<Long> advance = Arbitraries.frequencyOf(
                Tuple.of(5, Arbitraries.just(0L)),
                Tuple.of(4, Arbitraries.longs().between(1, Math.max(1, ttl / 4))),
                Tuple.of(1, Arbitraries.longs().between(1, ttl * 2)));
        Arbitrary<Long> permits = Arbitraries.frequencyOf(
                Tuple.of(1, Arbitraries.just(0L)),
                Tuple.of(8, Arbitraries.longs().between(1, max)),
                Tuple.of(1, Arbitraries.just(max)));
        Arbitrary<Integer> release = Arbitraries.frequencyOf(
                Tuple.of(3, Arbitraries.just(-1)), Tuple.of(2, Arbitraries.integers().between(0, 1000)));
        return Combinators.combine(advance, permits, release, Arbitraries.integers().between(0, 9),
                        Arbitraries.of(true, false))
                .as((a, p, r, rr, d) -> new Action(a, p, r, rr == 0, d))
                .list().ofMinSize(1).ofMaxSize(size);
    }

    /**
     * Against a model of the leases handed out: the same verdicts and releases, never more than
     * {@code maxConcurrent} live permits, and lease ids unique over the whole run even when the store drops
     * expired states (ids run ahead of the clock under same-microsecond grant/release cycles).
     */
    @Property(tries = 400)
    void neverMoreThanMaxInFlightAndLeaseIdsNeverRepeat(@ForAll("small") Scenario s) {
        check(s);
    }

    @Property(tries = 100)
    void noOverflowNearMaxTimeWithTheMostLeases(@ForAll("huge") Scenario s) {
        check(s);
    }

    private static void check(Scenario s) {
        ConcurrencyAlgorithm algorithm = new ConcurrencyAlgorithm(s.limit());
        long max = s.limit().maxConcurrent();
        Map<Long, long[]> model = new HashMap<>(); // lease id -> (permits, expiresAt), as handed out
        Set<Long> handedOut = new HashSet<>();
        List<Long> history = new ArrayList<>();
        long lastHandedOut = -1;
        State state = null;
        long now = s.start();
        for (Action a : s.actions()) {
            now = Math.min(Arith.MAX_TIME, now + a.advance());
            long t = now;
            model.values().removeIf(lease -> lease[1] <= t);
            if (a.storeDrops() && state != null && now >= algorithm.expiresAt(state)) {
                state = null;
            }
            long inFlight = model.values().stream().mapToLong(lease -> lease[0]).sum();
            assertThat(inFlight).isLessThanOrEqualTo(max);
            if (a.release() >= 0) {
                long id = a.release() < history.size() ? history.get(a.release()) : -2 - a.release();
                Release<State> released = algorithm.release(state, now, id);
                assertThat(released.released()).as("release %d at %d", id, now).isEqualTo(model.containsKey(id));
                if (!released.released()) {
                    assertThat(released.state()).isEqualTo(state);
                }
                model.remove(id);
                state = released.state();
                continue;
            }
            Step<State> step = algorithm.step(state, now, a.permits(), 0);
            checkContract(algorithm, state, now, a.permits(), step, false, true);
            // Ids stay below 2^53: once the next one would not, nothing is granted any more.
            boolean idsLeft = Math.max(now, lastHandedOut + 1) < Arith.MAX_TIME;
            assertThat(step.allowed()).isEqualTo(a.permits() == 0 || (idsLeft && inFlight + a.permits() <= max));
            long available = idsLeft ? Math.max(0, max - inFlight - (step.allowed() ? a.permits() : 0)) : 0;
            assertThat(step.remaining()).isEqualTo(available);
            assertThat(step.lease() >= 0).isEqualTo(step.allowed() && a.permits() > 0);
            assertThat(step.lease()).isLessThan(Arith.MAX_TIME);
            boolean committed = step.allowed() && !a.ruleRejects();
            if (committed && a.permits() > 0) {
                assertThat(handedOut.add(step.lease())).as("lease id %d is new", step.lease()).isTrue();
                model.put(step.lease(), new long[] {a.permits(), now + Arith.micros(s.limit().leaseTtl())});
                history.add(step.lease());
                lastHandedOut = step.lease();
            }
            state = committed ? step.admitted() : step.rejected();
            checkExpiry(algorithm, state, now, a.advance() % 5, a.permits(), 1);
        }
    }
}
