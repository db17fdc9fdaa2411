package io.sluice.internal.algorithm;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Limit;
import io.sluice.TokenBucket;
import io.sluice.TokenBucket.Refill;
import io.sluice.internal.algorithm.TokenBucketAlgorithm.State;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class TokenBucketAlgorithmTest {

    private static final long SECOND = 1_000_000;
    private static final long MINUTE = 60 * SECOND;
    private static final long NEVER = Long.MAX_VALUE;

    private static TokenBucketAlgorithm bucket(long capacity, long tokens, Duration period, Refill refill,
                                               long initial) {
        return new TokenBucketAlgorithm(new TokenBucket("tb", capacity, tokens, period, refill, initial));
    }

    private static TokenBucketAlgorithm greedy(long capacity, long tokens, Duration period) {
        return bucket(capacity, tokens, period, Refill.GREEDY, capacity);
    }

    // ---- GREEDY refill: Bucket4j's rounding error carried exactly ----

    @Test
    void greedyRefillCarriesTheRoundingErrorAsInTheEssay() {
        TokenBucketAlgorithm tb = greedy(10, 3, Duration.ofSeconds(1));
        State s = tb.refill(new State(2, 0, 0), 500_000);
        assertThat(s).isEqualTo(new State(3, 500_000, 500_000));
        s = tb.refill(s, 700_000);
        assertThat(s).isEqualTo(new State(4, 700_000, 100_000));

        // 6 permits lack 2 tokens: ceil((2 * 1_000_000 - 100_000) / 3) = 633_334 µs
        assertThat(BucketRun.describe(tb.step(s, 700_000, 6, 0)))
                .isEqualTo("reject remaining=4 retry=633334 reset=1966667");
        Step<State> reserved = tb.step(s, 700_000, 6, Long.MAX_VALUE);
        assertThat(BucketRun.describe(reserved)).isEqualTo("allow wait=633334 remaining=0 reset=3966667");
        assertThat(reserved.admitted()).isEqualTo(new State(-2, 700_000, 100_000));
        // at the promised time the deficit is refilled: exactly zero tokens, not one µs earlier
        assertThat(tb.refill(reserved.admitted(), 700_000 + 633_334).tokens()).isZero();
        assertThat(tb.refill(reserved.admitted(), 700_000 + 633_333).tokens()).isEqualTo(-1);
    }

    @Test
    void greedyRateIsReducedByGcd() {
        // TokenBucket's Javadoc: 1,000,000 per day reduces to 1 per 86.4 ms
        TokenBucketAlgorithm tb = greedy(5, 1_000_000, Duration.ofDays(1));
        State s = tb.refill(new State(0, 0, 0), 86_399);
        assertThat(s).isEqualTo(new State(0, 86_399, 86_399));
        assertThat(tb.refill(s, 86_400)).isEqualTo(new State(1, 86_400, 0));
    }

    @Test
    void greedyTimeline() {
        BucketRun<State> run = new BucketRun<>(greedy(10, 10, Duration.ofSeconds(1)));
        assertThat(run.tryAt(0, 0)).isEqualTo("allow wait=0 remaining=10 reset=0");
        assertThat(run.state).isNull(); // a peek creates no state
        assertThat(run.tryAt(0, 10)).isEqualTo("allow wait=0 remaining=0 reset=1000000");
        assertThat(run.tryAt(50_000, 1)).isEqualTo("reject remaining=0 retry=50000 reset=950000");
        assertThat(run.tryAt(100_000, 1)).isEqualTo("allow wait=0 remaining=0 reset=1000000");
        assertThat(run.tryAt(350_000, 0)).isEqualTo("allow wait=0 remaining=2 reset=750000");
        // 2.5 tokens are there (rounding error 50_000 of 100_000): the 5th permit is ready in 250 ms
        assertThat(run.reserveAt(350_000, 5)).isEqualTo("allow wait=250000 remaining=0 reset=1250000");
        assertThat(run.state).isEqualTo(new State(-3, 350_000, 50_000));
        Step<State> bounded = run.request(350_000, 1, 300_000);
        assertThat(BucketRun.describe(bounded)).isEqualTo("reject remaining=0 retry=350000 reset=1250000");
        assertThat(bounded.rejected()).isSameAs(run.state);
        assertThat(run.tryAt(5 * SECOND, 10)).isEqualTo("allow wait=0 remaining=0 reset=1000000");
    }

    // ---- INTERVAL: everything at once per whole period; the phase is forgotten when full ----

    @Test
    void intervalTimeline() {
        BucketRun<State> run = new BucketRun<>(bucket(10, 10, Duration.ofMinutes(1), Refill.INTERVAL, 10));
        assertThat(run.tryAt(0, 10)).isEqualTo("allow wait=0 remaining=0 reset=60000000");
        assertThat(run.tryAt(30 * SECOND, 1)).isEqualTo("reject remaining=0 retry=30000000 reset=30000000");
        assertThat(run.tryAt(60 * SECOND, 5)).isEqualTo("allow wait=0 remaining=5 reset=60000000");
        assertThat(run.reserveAt(90 * SECOND, 10)).isEqualTo("allow wait=30000000 remaining=0 reset=90000000");
        assertThat(run.state).isEqualTo(new State(-5, 60 * SECOND, 0));
        // -5 + 10 at 120 s = 5, +10 at 180 s = full
        assertThat(run.tryAt(150 * SECOND, 0)).isEqualTo("allow wait=0 remaining=5 reset=30000000");
        assertThat(run.tryAt(179 * SECOND, 5)).isEqualTo("allow wait=0 remaining=0 reset=1000000");
    }

    @Test
    void intervalForgetsItsPhaseOnceFull() {
        TokenBucketAlgorithm tb = bucket(10, 5, Duration.ofMinutes(1), Refill.INTERVAL, 10);
        BucketRun<State> run = new BucketRun<>(tb);
        assertThat(run.tryAt(0, 10)).isEqualTo("allow wait=0 remaining=0 reset=120000000");
        // full again at 120 s; Bucket4j's local bucket would keep the phase (next refill at 180 s, reset 50 s),
        // Sluice starts the next period at this request, as a new key would
        assertThat(run.tryAt(130 * SECOND, 5)).isEqualTo("allow wait=0 remaining=5 reset=60000000");
        assertThat(run.state).isEqualTo(new State(5, 130 * SECOND, 0));
        assertThat(tb.step(null, 130 * SECOND, 5, 0).admitted()).isEqualTo(run.state);
    }

    @Test
    void intervalAlignedUsesEpochMultiples() {
        BucketRun<State> run = new BucketRun<>(bucket(10, 10, Duration.ofMinutes(1), Refill.INTERVAL_ALIGNED, 10));
        assertThat(run.tryAt(90 * SECOND, 10)).isEqualTo("allow wait=0 remaining=0 reset=30000000");
        assertThat(run.state).isEqualTo(new State(0, MINUTE, 0));
        assertThat(run.tryAt(119 * SECOND, 1)).isEqualTo("reject remaining=0 retry=1000000 reset=1000000");
        assertThat(run.tryAt(125 * SECOND, 3)).isEqualTo("allow wait=0 remaining=7 reset=55000000");
        assertThat(run.state).isEqualTo(new State(7, 2 * MINUTE, 0));
        assertThat(run.reserveAt(125 * SECOND, 10)).isEqualTo("allow wait=55000000 remaining=0 reset=115000000");
    }

    @Test
    void initialTokensBelowCapacity() {
        TokenBucketAlgorithm tb = bucket(10, 1, Duration.ofSeconds(1), Refill.GREEDY, 2);
        BucketRun<State> run = new BucketRun<>(tb);
        assertThat(run.tryAt(0, 0)).isEqualTo("allow wait=0 remaining=2 reset=8000000");
        assertThat(run.state).isNull(); // a peek creates nothing
        assertThat(run.tryAt(0, 3)).isEqualTo("reject remaining=2 retry=1000000 reset=8000000");
        assertThat(run.state).isEqualTo(new State(2, 0, 0)); // ... but a rejection creates the bucket
        assertThat(run.tryAt(0, 2)).isEqualTo("allow wait=0 remaining=0 reset=10000000");
        // a full bucket is not a new key (which starts with 2): the state is kept, and the key idle until full
        // comes back with 10 tokens, as Bucket4j's bucket does
        assertThat(tb.expiresAt(run.state)).isEqualTo(Long.MAX_VALUE);
        assertThat(run.tryAt(60 * SECOND, 10)).isEqualTo("allow wait=0 remaining=0 reset=10000000");
        // a key never seen starts with 2
        assertThat(tb.step(null, 60 * SECOND, 3, 0).allowed()).isFalse();
        assertThat(tb.grantable(null, 60 * SECOND, 10)).isEqualTo(2);
    }

    @Test
    void aBucketStartingEmptyAdmitsOnceRefilled() {
        // initial_tokens 0: the first request is rejected, but it creates the bucket, which refills from then
        // (before, a rejection committed nothing and every request found a new, empty bucket: never admitted)
        for (Refill refill : Refill.values()) {
            TokenBucketAlgorithm tb = bucket(5, 1, Duration.ofSeconds(1), refill, 0);
            BucketRun<State> run = new BucketRun<>(tb);
            assertThat(run.tryAt(0, 1)).as(refill.name()).isEqualTo("reject remaining=0 retry=1000000 reset=5000000");
            assertThat(run.tryAt(999_999, 1)).as(refill.name()).startsWith("reject");
            assertThat(run.tryAt(SECOND, 1)).as(refill.name()).startsWith("allow");
            assertThat(run.tryAt(6 * SECOND, 5)).as(refill.name()).startsWith("allow");
        }
    }

    // ---- expiry ----

    @Test
    void expiresWhenFullAgainForEveryStyle() {
        for (Refill refill : Refill.values()) {
            TokenBucketAlgorithm tb = bucket(10, 5, Duration.ofMinutes(1), refill, 10);
            Step<State> first = tb.step(null, 90 * SECOND, 7, 0);
            long expiresAt = tb.expiresAt(first.admitted());
            long expected = refill == Refill.GREEDY ? 90 * SECOND + 84 * SECOND
                    : refill == Refill.INTERVAL ? 90 * SECOND + 2 * MINUTE : 3 * MINUTE;
            assertThat(expiresAt).as(refill.name()).isEqualTo(expected);
            for (long permits : new long[] {0, 1, 10}) {
                Step<State> kept = tb.step(first.admitted(), expiresAt, permits, 0);
                Step<State> fresh = tb.step(null, expiresAt, permits, 0);
                assertThat(BucketRun.decision(kept)).isEqualTo(BucketRun.decision(fresh));
                if (permits > 0) {
                    assertThat(kept.admitted()).isEqualTo(fresh.admitted());
                }
            }
            Step<State> early = tb.step(first.admitted(), expiresAt - 1, 0, 0);
            assertThat(early.remaining()).as(refill.name()).isLessThan(10);
        }
    }

    @Test
    void aFullStateExpiresAtItsLastRefill() {
        TokenBucketAlgorithm tb = bucket(10, 5, Duration.ofMinutes(1), Refill.INTERVAL, 10);
        assertThat(tb.expiresAt(new State(10, 42, 0))).isEqualTo(42);
    }

    // ---- edges ----

    @Test
    void timeGoingBackwardsMeansNoTimePassed() {
        TokenBucketAlgorithm tb = greedy(10, 10, Duration.ofSeconds(1));
        State s = new State(0, 500_000, 0);
        // the state's clock is 500 ms ahead: the token arrives 100 ms after the state's time
        assertThat(BucketRun.describe(tb.step(s, 200_000, 1, 0)))
                .isEqualTo("reject remaining=0 retry=400000 reset=1300000");
        Step<State> reserved = tb.step(s, 200_000, 1, Long.MAX_VALUE);
        assertThat(reserved.waitMicros()).isEqualTo(400_000);
        assertThat(reserved.admitted()).isEqualTo(new State(-1, 500_000, 0));
        assertThat(tb.grantable(new State(3, 500_000, 0), 0, 10)).isEqualTo(3);
    }

    @Test
    void clockBoundaries() {
        TokenBucketAlgorithm tb = greedy(10, 1, Duration.ofSeconds(1));
        assertThat(BucketRun.describe(tb.step(null, 0, 10, 0))).isEqualTo("allow wait=0 remaining=0 reset=10000000");
        Step<State> last = tb.step(null, Arith.MAX_TIME, 10, 0);
        // full again only after the end of the clock: reported as never, and never expires
        assertThat(BucketRun.describe(last)).isEqualTo("allow wait=0 remaining=0 reset=" + NEVER);
        assertThat(tb.expiresAt(last.admitted())).isEqualTo(NEVER);
        assertThat(tb.step(last.admitted(), Arith.MAX_TIME, 1, Long.MAX_VALUE).allowed()).isFalse();
        assertThat(tb.step(last.admitted(), Arith.MAX_TIME, 1, Long.MAX_VALUE).retryAfterMicros()).isEqualTo(NEVER);
    }

    @Test
    void hugeCountsAtHighRateStopAtTheDebtBound() {
        // 10^12 tokens per µs: each reservation of 10^12 adds 1 µs of wait; the debt stops at 2^53 tokens
        TokenBucketAlgorithm tb = greedy(Limit.MAX_COUNT, Limit.MAX_COUNT, Duration.ofNanos(1_000));
        BucketRun<State> run = new BucketRun<>(tb);
        assertThat(run.tryAt(1_000, Limit.MAX_COUNT)).isEqualTo("allow wait=0 remaining=0 reset=1");
        long reservations = 0;
        while (run.request(1_000, Limit.MAX_COUNT, Long.MAX_VALUE).allowed()) {
            reservations++;
        }
        assertThat(Limit.MAX_COUNT - run.state.tokens()).isLessThanOrEqualTo(TokenBucketAlgorithm.MAX_DEFICIT);
        assertThat(reservations).isEqualTo(TokenBucketAlgorithm.MAX_DEFICIT / Limit.MAX_COUNT - 1);
        Step<State> refused = run.request(1_000, Limit.MAX_COUNT, Long.MAX_VALUE);
        assertThat(refused.retryAfterMicros()).isEqualTo(reservations + 1);
        assertThat(tb.expiresAt(run.state)).isEqualTo(1_000 + reservations + 1);
    }

    @Test
    void hugeCountsAtLowRateReportNever() {
        // 10^12 tokens, one per 366 days: refilling them all takes longer than the clock lasts
        TokenBucketAlgorithm tb = greedy(Limit.MAX_COUNT, 1, Limit.MAX_DURATION);
        long day366 = Arith.micros(Limit.MAX_DURATION);
        Step<State> all = tb.step(null, 0, Limit.MAX_COUNT, 0);
        assertThat(BucketRun.describe(all)).isEqualTo("allow wait=0 remaining=0 reset=" + NEVER);
        assertThat(BucketRun.describe(tb.step(all.admitted(), 0, 1, 0)))
                .isEqualTo("reject remaining=0 retry=" + day366 + " reset=" + NEVER);
        assertThat(tb.step(all.admitted(), 0, 1, Long.MAX_VALUE).waitMicros()).isEqualTo(day366);
        assertThat(tb.step(all.admitted(), 0, Limit.MAX_COUNT, Long.MAX_VALUE).allowed()).isFalse();
    }

    @Test
    void grantableIsTheBestEffortPartialGrant() {
        TokenBucketAlgorithm tb = greedy(10, 10, Duration.ofSeconds(1));
        assertThat(tb.grantable(null, 0, 3)).isEqualTo(3);
        assertThat(tb.grantable(null, 0, Long.MAX_VALUE)).isEqualTo(10);
        assertThat(tb.grantable(new State(-4, 0, 0), 0, 5)).isZero();
        assertThat(tb.grantable(new State(-4, 0, 0), 700_000, 5)).isEqualTo(3);
    }

    // ---- migrate: AS_IS ----

    @Test
    void migrateCapsTokensAndKeepsTheRoundingErrorOnlyForTheSameRate() {
        TokenBucket before = new TokenBucket("tb", 10, 3, Duration.ofSeconds(1), Refill.GREEDY, 10);
        State s = new State(2, 0, 0);
        // refilled under the old rate first: 4 tokens and 100_000 of rounding error at 700 ms
        assertThat(greedy(3, 3, Duration.ofSeconds(1)).migrate(s, before, 700_000))
                .isEqualTo(new State(3, 700_000, 0));
        assertThat(greedy(20, 6, Duration.ofSeconds(2)).migrate(s, before, 700_000))
                .isEqualTo(new State(4, 700_000, 100_000));
        assertThat(greedy(20, 1, Duration.ofSeconds(1)).migrate(s, before, 700_000))
                .isEqualTo(new State(4, 700_000, 0));
        assertThat(greedy(20, 1, Duration.ofSeconds(1)).migrate(null, before, 700_000)).isNull();
    }

    @Test
    void migrateKeepsTheLastRefillAndSnapsToTheEpochGridWhenAligned() {
        TokenBucket before = new TokenBucket("tb", 10, 10, Duration.ofMinutes(1), Refill.INTERVAL, 10);
        State s = new State(0, 10 * SECOND, 0);
        TokenBucketAlgorithm slower = bucket(10, 10, Duration.ofMinutes(2), Refill.INTERVAL, 10);
        assertThat(slower.migrate(s, before, 50 * SECOND)).isEqualTo(new State(0, 10 * SECOND, 0));
        TokenBucketAlgorithm aligned = bucket(10, 10, Duration.ofMinutes(1), Refill.INTERVAL_ALIGNED, 10);
        assertThat(aligned.migrate(s, before, 50 * SECOND)).isEqualTo(new State(0, 0, 0));
        assertThat(aligned.migrate(s, before, 75 * SECOND)).isEqualTo(new State(10, MINUTE, 0));
    }

    @Test
    void permitsAtMaxPermitsAndAlgorithmsFactory() {
        TokenBucket limit = TokenBucket.of(7, 7, Duration.ofSeconds(7));
        assertThat(Algorithms.of(limit)).isInstanceOf(TokenBucketAlgorithm.class);
        assertThat(Algorithms.of(limit).limit()).isSameAs(limit);
        TokenBucketAlgorithm tb = new TokenBucketAlgorithm(limit);
        assertThat(BucketRun.describe(tb.step(null, 0, limit.maxPermits(), 0)))
                .isEqualTo("allow wait=0 remaining=0 reset=7000000");
    }
}
