package io.sluice.internal.algorithm;

import static io.sluice.internal.algorithm.WindowAlgorithmsSupport.SEC;
import static io.sluice.internal.algorithm.WindowAlgorithmsSupport.assertStep;
import static io.sluice.internal.algorithm.WindowAlgorithmsSupport.micros;
import static io.sluice.internal.algorithm.WindowAlgorithmsSupport.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.Concurrency;
import io.sluice.FixedWindow;
import io.sluice.Limit;
import io.sluice.internal.algorithm.Algorithm.Release;
import io.sluice.internal.algorithm.ConcurrencyAlgorithm.State;
import java.util.List;
import org.junit.jupiter.api.Test;

class ConcurrencyAlgorithmTest {

    private static ConcurrencyAlgorithm algorithm(long max, long ttlMicros) {
        return new ConcurrencyAlgorithm(Concurrency.of(max, micros(ttlMicros)));
    }

    private static State leases(long lastId, long... triples) {
        return new State(lastId, triples);
    }

    @Test
    void essayTimeline() {
        ConcurrencyAlgorithm c = new ConcurrencyAlgorithm(Concurrency.of(2, seconds(30)));

        Step<State> a = c.step(null, 0, 1, 0);
        assertStep(a, true, 1, 0, 30 * SEC);
        assertThat(a.lease()).isZero();

        Step<State> b = c.step(a.admitted(), 0, 1, 0);
        assertStep(b, true, 0, 0, 30 * SEC);
        assertThat(b.lease()).as("same microsecond: previous id + 1").isEqualTo(1);

        Step<State> full = c.step(b.admitted(), 5 * SEC, 1, 0);
        assertStep(full, false, 0, 25 * SEC, 25 * SEC);
        assertThat(full.lease()).isEqualTo(-1);
        assertThat(full.rejected()).isSameAs(b.admitted());

        Release<State> released = c.release(b.admitted(), 6 * SEC, 0);
        assertThat(released.released()).isTrue();
        assertThat(released.state()).isEqualTo(leases(1, 1, 1, 30 * SEC));

        Step<State> cLease = c.step(released.state(), 7 * SEC, 1, 0);
        assertStep(cLease, true, 0, 0, 30 * SEC);
        assertThat(cLease.lease()).isEqualTo(7 * SEC);
        assertThat(c.expiresAt(cLease.admitted())).isEqualTo(37 * SEC);
    }

    @Test
    void idsThatRunAheadOfTheClockKeepTheStateUntilTheClockCatchesUp() {
        ConcurrencyAlgorithm c = algorithm(1, 10);
        State state = null;
        long lease = -1;
        for (int i = 0; i < 3; i++) {
            Step<State> step = c.step(state, 100, 1, 0);
            lease = step.lease();
            state = c.release(step.admitted(), 100, lease).state();
        }
        assertThat(lease).isEqualTo(102);
        assertThat(state).isEqualTo(leases(102));
        assertThat(c.expiresAt(state)).isEqualTo(103);

        assertThat(c.step(state, 101, 1, 0).lease()).as("not 101, handed out before").isEqualTo(103);
        assertThat(c.step(state, 103, 1, 0).lease()).isEqualTo(c.step(null, 103, 1, 0).lease());
        State held = c.step(state, 103, 1, 0).admitted();
        assertThat(c.release(held, 103, 103).state()).as("id 103 is still the latest").isEqualTo(leases(103));
        assertThat(c.release(held, 104, 103).state()).as("nothing left that matters").isNull();
    }

    @Test
    void releaseOfAnUnknownOrExpiredLeaseChangesNothing() {
        ConcurrencyAlgorithm c = algorithm(2, 10);
        State state = leases(5, 5, 1, 15);

        assertThat(c.release(state, 7, 4)).isEqualTo(new Release<>(false, state));
        assertThat(c.release(state, 15, 5)).isEqualTo(new Release<>(false, state));
        assertThat(c.release(null, 15, 5)).isEqualTo(new Release<State>(false, null));
        assertThat(c.release(state, 14, 5).released()).isTrue();
    }

    @Test
    void expiredLeasesDoNotCount() {
        ConcurrencyAlgorithm c = algorithm(1, 10);
        State state = leases(5, 5, 1, 15);

        assertStep(c.step(state, 14, 1, 0), false, 0, 1, 1);
        Step<State> afterExpiry = c.step(state, 15, 1, 0);
        assertStep(afterExpiry, true, 0, 0, 10);
        assertThat(afterExpiry.admitted()).isEqualTo(leases(15, 15, 1, 25));
    }

    @Test
    void retryAfterLetsLeasesGoEarliestExpiryFirst() {
        ConcurrencyAlgorithm c = algorithm(4, 10);
        State state = leases(3, 1, 2, 50, 2, 1, 30, 3, 1, 40);

        assertStep(c.step(state, 10, 1, 0), false, 0, 20, 40);
        assertStep(c.step(state, 10, 2, 0), false, 0, 30, 40);
        assertStep(c.step(state, 10, 3, 0), false, 0, 40, 40);
        assertThat(c.grantable(state, 35, 9)).isEqualTo(1);
        assertThat(c.grantable(null, 35, 9)).isEqualTo(4);
    }

    @Test
    void permitsZeroInspectsWithoutALease() {
        ConcurrencyAlgorithm c = algorithm(3, 10);
        State state = leases(5, 5, 1, 15);

        Step<State> peek = c.step(state, 7, 0, 0);

        assertStep(peek, true, 2, 0, 8);
        assertThat(peek.lease()).isEqualTo(-1);
        assertThat(peek.admitted()).isSameAs(state);
        assertStep(c.step(null, 7, 0, 0), true, 3, 0, 0);
    }

    @Test
    void clockGoingBackwardsStillHandsOutANewId() {
        ConcurrencyAlgorithm c = algorithm(2, 10);
        State state = leases(100, 100, 1, 110);

        Step<State> step = c.step(state, 50, 1, 0);

        assertThat(step.lease()).isEqualTo(101);
        assertThat(step.admitted()).isEqualTo(leases(101, 100, 1, 110, 101, 1, 60));
        assertStep(c.step(step.admitted(), 50, 1, 0), false, 0, 10, 60);
    }

    @Test
    void worksAtTimeZeroAndAtMaxTimeWithTheMostLeases() {
        assertThat(algorithm(1, 1).step(null, 0, 1, 0).admitted()).isEqualTo(leases(0, 0, 1, 1));

        long ttl = Arith.micros(Limit.MAX_DURATION);
        long last = Arith.MAX_TIME - 1;
        ConcurrencyAlgorithm c = new ConcurrencyAlgorithm(Concurrency.of(Concurrency.MAX_LEASES, Limit.MAX_DURATION));
        Step<State> all = c.step(null, last, Concurrency.MAX_LEASES, 0);
        assertStep(all, true, 0, 0, ttl);
        assertThat(all.lease()).isEqualTo(last);
        assertThat(c.expiresAt(all.admitted())).isEqualTo(last + ttl);
        assertStep(c.step(all.admitted(), last, 1, 0), false, 0, Arith.NEVER, ttl);
        assertStep(c.step(all.admitted(), Arith.MAX_TIME, 1, 0), false, 0, Arith.NEVER, ttl - 1);
    }

    @Test
    void leaseIdsStayBelowTwoToThe53SoALuaNumberHoldsThem() {
        ConcurrencyAlgorithm c = algorithm(3, 10);
        long last = Arith.MAX_TIME - 1;

        Step<State> first = c.step(null, last - 1, 1, 0);
        Step<State> second = c.step(first.admitted(), last - 1, 1, 0);
        assertThat(List.of(first.lease(), second.lease())).containsExactly(last - 1, last);

        Step<State> out = c.step(second.admitted(), last - 1, 1, 0);
        assertStep(out, false, 0, Arith.NEVER, 10);
        assertThat(out.rejected()).isSameAs(second.admitted());
        assertStep(c.step(second.admitted(), last - 1, 0, 0), true, 0, 0, 10);
        assertThat(c.grantable(second.admitted(), last - 1, 3)).isZero();

        State released = c.release(c.release(second.admitted(), last - 1, last - 1).state(), last - 1, last).state();
        assertThat(released).as("kept until lastId + 1 = MAX_TIME").isEqualTo(leases(last));
        assertThat(c.expiresAt(released)).isEqualTo(Arith.MAX_TIME);
        assertStep(c.step(released, Arith.MAX_TIME, 1, 0), false, 0, Arith.NEVER, 0);
        assertStep(c.step(null, Arith.MAX_TIME, 1, 0), false, 0, Arith.NEVER, 0);
        assertThat(c.grantable(null, Arith.MAX_TIME, 3)).isZero();
        assertThat(c.grantable(null, last, 3)).isEqualTo(3);

        ConcurrencyAlgorithm one = algorithm(1, 10);
        State early = one.step(null, Arith.MAX_TIME - 20, 1, 0).admitted();
        assertStep(one.step(early, Arith.MAX_TIME - 15, 1, 0), false, 0, 5, 5);
        State late = one.step(null, Arith.MAX_TIME - 5, 1, 0).admitted();
        assertStep(one.step(late, Arith.MAX_TIME - 4, 1, 0), false, 0, Arith.NEVER, 9);
        State lastInTime = one.step(null, Arith.MAX_TIME - 11, 1, 0).admitted();
        assertStep(one.step(lastInTime, Arith.MAX_TIME - 6, 1, 0), false, 0, 5, 5);
        assertThat(one.step(lastInTime, Arith.MAX_TIME - 1, 1, 0).lease()).isEqualTo(Arith.MAX_TIME - 1);
    }

    @Test
    void migrateKeepsLeasesAndAppliesANewTtlToNewLeases() {
        Concurrency before = Concurrency.of(3, micros(10));
        State state = leases(5, 5, 2, 15);

        ConcurrencyAlgorithm lower = new ConcurrencyAlgorithm(before.withMaxConcurrent(1));
        assertThat(lower.migrate(state, before, 7)).isSameAs(state);
        assertStep(lower.step(state, 7, 1, 0), false, 0, 8, 8);

        ConcurrencyAlgorithm longer = new ConcurrencyAlgorithm(before.withLeaseTtl(micros(100)));
        assertThat(longer.step(longer.migrate(state, before, 7), 7, 1, 0).admitted())
                .isEqualTo(leases(7, 5, 2, 15, 7, 1, 107));
        assertThatThrownBy(() -> lower.migrate(state, FixedWindow.of(3, micros(10)), 7))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void algorithmsMapsTheLimitToThisTransition() {
        assertThat(Algorithms.of(Concurrency.of(3, seconds(10)))).isInstanceOf(ConcurrencyAlgorithm.class);
    }
}
