package io.sluice.internal.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.Decision;
import io.sluice.Concurrency;
import io.sluice.FixedWindow;
import io.sluice.Gcra;
import io.sluice.LeakyBucket;
import io.sluice.RateLimiter;
import io.sluice.RefreshPeriod;
import io.sluice.Rule;
import io.sluice.SmoothBursty;
import io.sluice.Store;
import io.sluice.TokenBucket;
import io.sluice.internal.algorithm.Arith;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class MemoryStoreTest {

    private final AtomicLong now = new AtomicLong(1_767_225_600_000_000L);

    private MemoryStore store(long maxKeys) {
        return (MemoryStore) Store.memory().clock(now::get).maxKeys(maxKeys).build();
    }

    private RateLimiter limiter(MemoryStore store, long limit, Duration window) {
        return RateLimiter.builder(Rule.of("r", FixedWindow.of(limit, window))).store(store).build();
    }

    @Test
    void aLimitStateExpiredUnderItsOldParametersIsDroppedNotMigrated() {
        MemoryStore store = store(1_000_000);
        // The day-long window keeps the key's entry alive while the bucket's own state expires.
        FixedWindow daily = FixedWindow.of(100, Duration.ofDays(1)).named("daily");
        RateLimiter limiter = RateLimiter.builder(Rule.of("r", daily, TokenBucket.of(1, 1, Duration.ofSeconds(1))))
                .store(store).build();
        assertThat(limiter.tryAcquire("k").allowed()).isTrue();
        now.addAndGet(2_000_000); // the bucket is full again: its state expired
        limiter.updateLimit(TokenBucket.of(5, 1, Duration.ofSeconds(1)));
        // Migrated, the expired state would keep its single token (capped, AS_IS); dropped, the key is new.
        assertThat(limiter.peek("k", 0).remaining()).isEqualTo(5);

        RateLimiter leaky = RateLimiter.builder(Rule.of("l", daily, LeakyBucket.of(10, Duration.ofSeconds(1))))
                .store(store).build();
        assertThat(leaky.tryAcquire("k").allowed()).isTrue();
        now.addAndGet(150_000); // drained at 10/s (expired after 100 ms), not yet at 1/s
        leaky.updateLimit(LeakyBucket.of(1, Duration.ofSeconds(1)));
        assertThat(leaky.tryAcquire("k").allowed()).isTrue();
    }

    @Test
    void aMigratedStateAlreadyExpiredUnderItsNewParametersIsDroppedToo() {
        MemoryStore store = store(1_000_000);
        FixedWindow daily = FixedWindow.of(100, Duration.ofDays(1)).named("daily");
        TokenBucket hourly = new TokenBucket("bucket", 10, 1, Duration.ofHours(1), TokenBucket.Refill.GREEDY, 10);
        RateLimiter limiter = RateLimiter.builder(Rule.of("r", daily, hourly)).store(store).build();
        assertThat(limiter.tryAcquire("k", 2).allowed()).isTrue(); // 8 tokens, full again in 2 hours
        now.addAndGet(1_000);
        // Capped at 5 the bucket is full, refilled now: already expired, so dropped, not kept by the peek.
        limiter.updateLimit(hourly.withCapacity(5).named("bucket"));
        assertThat(limiter.peek("k", 0).remaining()).isEqualTo(5);
        now.addAndGet(-500); // the clock steps back: a new key's bucket refills from now, not from 500 µs ahead
        assertThat(limiter.tryAcquire("k", 5).allowed()).isTrue();
        assertThat(limiter.peek("k", 1).retryAfterMicros()).isEqualTo(3_600_000_000L);
    }

    @Test
    void aRuleChangeOnAnExpiredKeyKeepsTheUnchangedLimitsStatesForAClockThatStepsBack() {
        MemoryStore store = store(1_000_000);
        Gcra perSecond = Gcra.of(1, Duration.ofSeconds(1));
        RateLimiter limiter = RateLimiter.builder(Rule.of("r", perSecond, FixedWindow.of(5, Duration.ofSeconds(1))))
                .store(store).build();
        assertThat(limiter.tryAcquire("k").allowed()).isTrue(); // TAT and window end: 1 s from now
        now.addAndGet(1_000_000); // the whole key has expired
        limiter.updateLimit(FixedWindow.of(6, Duration.ofSeconds(1)));
        assertThat(limiter.peek("k", 0).remaining()).isEqualTo(1); // rewrites the entry under the new rule
        now.addAndGet(-1); // the clock steps back before the TAT, which the gcra limit did not forget
        assertThat(limiter.tryAcquire("k").allowed()).isFalse();
    }

    @Test
    void expiredKeysAreSweptAway() {
        MemoryStore store = store(1_000_000);
        RateLimiter limiter = limiter(store, 1, Duration.ofSeconds(1));
        for (int i = 0; i < 10_000; i++) {
            assertThat(limiter.tryAcquire("k" + i).allowed()).isTrue();
        }
        assertThat(store.size()).isEqualTo(10_000);
        now.addAndGet(1_000_000);
        // The documented bound: every key is dropped within 3 · max(4096, keys) decisions (the lap under way
        // ends, the next one finds the key expired, the one after finds it expired again), to within a batch of 64.
        for (int i = 0; i < 3 * 10_001 + 64; i++) {
            limiter.tryAcquire("hot");
        }
        assertThat(store.size()).isEqualTo(1);
    }

    @Test
    void aKeyAskedForBetweenTwoSweepsKeepsItsHolderThoughItsStateExpiresEachTime() {
        MemoryStore store = store(1_000_000);
        // A bucket so generous it is full again a microsecond after each request: expired when the sweep comes.
        long rate = 1_000_000_000_000L;
        RateLimiter limiter = RateLimiter.builder(Rule.of("r", TokenBucket.of(rate, rate, Duration.ofSeconds(1))))
                .store(store).build();
        int keys = 10_000;
        // Filling the store resizes its map, which reorders the sweep's laps; from the third lap on the order is
        // fixed, and a lap (10,048 decisions) is longer than the round of the keys (10,000).
        for (int lap = 0; lap < 3; lap++) {
            for (int i = 0; i < keys; i++) {
                now.incrementAndGet();
                assertThat(limiter.tryAcquire("k" + i).allowed()).isTrue();
            }
        }
        Holder[] holders = new Holder[keys];
        for (int i = 0; i < keys; i++) {
            holders[i] = store.holderOf("r", "k" + i);
        }
        // Five more laps of the sweep, each key asked for once per lap and found expired by the sweep in between.
        for (int lap = 0; lap < 5; lap++) {
            for (int i = 0; i < keys; i++) {
                now.incrementAndGet();
                assertThat(limiter.tryAcquire("k" + i).allowed()).isTrue();
            }
        }
        for (int i = 0; i < keys; i++) {
            assertThat(store.holderOf("r", "k" + i)).as("holder of k%d", i).isSameAs(holders[i]);
        }
        // Half the keys go idle: found expired twice in a row, they leave.
        for (int lap = 0; lap < 8; lap++) {
            for (int i = 0; i < keys / 2; i++) {
                now.incrementAndGet();
                limiter.tryAcquire("k" + i);
            }
        }
        assertThat(store.size()).isEqualTo(keys / 2);
        assertThat(store.holderOf("r", "k0")).isSameAs(holders[0]);
    }

    @Test
    void maxKeysBoundsTheNumberOfKeysEvictingThoseClosestToExpiry() {
        MemoryStore store = store(1_000);
        RateLimiter longLived = RateLimiter.builder(Rule.of("long", FixedWindow.of(1, Duration.ofDays(1))))
                .store(store).build();
        RateLimiter shortLived = limiter(store, 1, Duration.ofSeconds(1));
        assertThat(longLived.tryAcquire("keep").allowed()).isTrue();
        for (int i = 0; i < 5_000; i++) {
            shortLived.tryAcquire("k" + i);
            assertThat(store.size()).isLessThanOrEqualTo(1_000);
        }
        // The day-long key expires last, so eviction never chose it: it still rejects.
        assertThat(longLived.tryAcquire("keep").allowed()).isFalse();
    }

    @Test
    void eachInsertionPastMaxKeysEvictsOnlyWhatTakesTheStoreBackToMaxKeys() {
        MemoryStore store = store(1_000);
        RateLimiter limiter = limiter(store, 1, Duration.ofHours(1));
        for (int i = 0; i < 5_000; i++) {
            limiter.tryAcquire("k" + i);
            // No batch down to a fraction of maxKeys (a whole-table pass, sort included, on one request): every
            // key is live, so each insertion beyond 1,000 evicts exactly one.
            assertThat(store.size()).isEqualTo(Math.min(i + 1, 1_000));
        }
    }

    @Test
    void expiredKeysLeaveAFewAtATimeNeverInOnePassOnOneRequest() {
        MemoryStore store = store(1_000_000);
        RateLimiter limiter = limiter(store, 1, Duration.ofSeconds(1));
        for (int i = 0; i < 10_000; i++) {
            limiter.tryAcquire("k" + i);
        }
        now.addAndGet(1_000_000);
        long before = store.size();
        for (int i = 0; i < 4 * 10_001; i++) {
            limiter.tryAcquire("hot");
            long size = store.size();
            // One decision sweeps at most one batch of 64 keys, whatever the store holds.
            assertThat(before - size).isLessThanOrEqualTo(64);
            before = size;
        }
        assertThat(store.size()).isEqualTo(1);
    }

    @Test
    void aFloodOfNewKeysFromManyThreadsKeepsTheStoreNearMaxKeysAndALongLimitedKeyRejected() throws Exception {
        MemoryStore store = store(2_000);
        RateLimiter daily = RateLimiter.builder(Rule.of("daily", FixedWindow.of(1, Duration.ofDays(1))))
                .store(store).build();
        RateLimiter flood = limiter(store, 1, Duration.ofSeconds(1));
        assertThat(daily.tryAcquire("victim").allowed()).isTrue();
        int threads = 4;
        Thread[] workers = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            int id = t;
            workers[t] = new Thread(() -> {
                for (int i = 0; i < 20_000; i++) {
                    flood.tryAcquire(id + ":" + i);
                }
            });
            workers[t].start();
        }
        for (Thread worker : workers) {
            worker.join();
        }
        // Racing insertions may each leave one key over while another thread holds the cursor.
        assertThat(store.size()).isBetween(1_000L, 2_000L + threads);
        // The victim's state expires a day after every flood key's: no sample ever chose it.
        assertThat(daily.tryAcquire("victim").allowed()).isFalse();
    }

    @Test
    void peeksAndRejectionsOfUnknownKeysLeaveNothingBehind() {
        MemoryStore store = store(1_000_000);
        RateLimiter limiter = limiter(store, 1, Duration.ofSeconds(1));
        for (int i = 0; i < 100; i++) {
            limiter.peek("k" + i, 1);
        }
        assertThat(store.size()).isZero();
    }

    @Test
    void aClockOutsideTheSupportedRangeFailsClearly() {
        MemoryStore store = store(10);
        RateLimiter limiter = limiter(store, 1, Duration.ofSeconds(1));
        now.set(Long.MAX_VALUE - 5);
        assertThatThrownBy(() -> limiter.tryAcquire("k")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("clock reading must be in [0, 2^53]");
        now.set(-1);
        assertThatThrownBy(() -> limiter.tryAcquire("k")).hasMessageContaining("clock reading");
    }

    @Test
    void aChangedLimitDropsAStateThatHadExpiredSoAClockSteppingBackCannotRevive() {
        MemoryStore store = store(10);
        Rule rule = Rule.of("r", Concurrency.of(2, Duration.ofNanos(10_000)).named("c"),
                FixedWindow.of(5, Duration.ofDays(1)).named("day"));
        RateLimiter limiter = RateLimiter.builder(rule).store(store).build();
        long t0 = now.get();
        assertThat(limiter.tryAcquire("k", 2).allowed()).isTrue();
        now.set(t0 + 10);
        limiter.updateLimit(Concurrency.of(2, Duration.ofNanos(20_000)).named("c"));
        assertThat(limiter.peek("k", 0).remaining()).isEqualTo(2);
        now.set(t0 + 5);
        // The lease expired at t0 + 10 and went with the migration, as the Redis script drops it.
        assertThat(limiter.tryAcquire("k", 2).allowed()).isTrue();
    }

    @Test
    void aRuleChangeKeepsTheUnchangedLimitsStatesEvenWhenAllHaveExpired() {
        MemoryStore store = store(10);
        Rule rule = Rule.of("r", Concurrency.of(1, Duration.ofNanos(10_000)).named("c"),
                FixedWindow.of(5, Duration.ofNanos(20_000)).named("w"));
        RateLimiter limiter = RateLimiter.builder(rule).store(store).build();
        long t0 = now.get();
        long lease = limiter.tryAcquire("k").lease();
        now.set(t0 + 30);
        limiter.updateLimit(FixedWindow.of(5, Duration.ofNanos(40_000)).named("w"));
        limiter.peek("k", 0);
        now.set(t0 + 5);
        // As if the rule had not changed (and as the Redis script leaves the unchanged limit's key).
        assertThat(limiter.release("k", lease)).isTrue();
    }

    @Test
    void aLimitThatRecordsARejectionLeavesTheOtherLimitsExpiredStatesAlone() {
        MemoryStore store = store(10);
        FixedWindow recording = new FixedWindow("w", 1, Duration.ofNanos(5_000), FixedWindow.Align.FIRST_REQUEST, true);
        Rule rule = Rule.of("r", Concurrency.of(5, Duration.ofNanos(10_000)).named("c"), recording);
        RateLimiter limiter = RateLimiter.builder(rule).store(store).build();
        now.set(Arith.MAX_TIME - 20);
        long lease = limiter.tryAcquire("k").lease();
        now.set(Arith.MAX_TIME);
        // Every state has expired; no lease id is left at MAX_TIME, and "w" records the rejected attempt.
        assertThat(limiter.tryAcquire("k").allowed()).isFalse();
        now.set(Arith.MAX_TIME - 15);
        // Only "w" was written: the lease is still there for a clock that steps back, as in Redis.
        assertThat(limiter.release("k", lease)).isTrue();
    }

    @Test
    void resetDropsTheKey() {
        MemoryStore store = store(10);
        RateLimiter limiter = limiter(store, 1, Duration.ofSeconds(1));
        limiter.tryAcquire("k");
        assertThat(store.size()).isEqualTo(1);
        limiter.reset("k");
        assertThat(store.size()).isZero();
        assertThat(limiter.tryAcquire("k").allowed()).isTrue();
    }

    @Test
    void aStateThatExpiredOnItsOwnDecidesAsNoStateInARuleOfSeveralLimits() {
        MemoryStore store = store(10);
        Rule rule = Rule.of("two", FixedWindow.of(100, Duration.ofHours(1)), SmoothBursty.of(5.0));
        RateLimiter l = RateLimiter.builder(rule).store(store).build();
        RateLimiter alone = RateLimiter.builder(Rule.of("alone", SmoothBursty.of(5.0))).store(store).build();
        // the 5 saved permits of a key without state and one more: nothing saved, the next ticket at 200 ms
        assertThat(l.tryAcquire("k", 6).allowed()).isTrue();
        assertThat(alone.tryAcquire("k", 6).allowed()).isTrue();
        now.addAndGet(1_199_999);
        assertThat(l.peek("k", 0).remaining()).isEqualTo(4);
        now.addAndGet(1);
        // smooth_bursty is full, so its state expired: it comes back as a key without state, its burst saved, as it
        // does alone in its rule and in the Redis store, though the fixed window keeps the entry alive
        assertThat(alone.peek("k", 0).remaining()).isEqualTo(5);
        Decision d = l.peek("k", 0);
        assertThat(d.remaining()).isEqualTo(5);
        assertThat(d.limit()).isEqualTo("smooth_bursty");
    }

    @Test
    void aMigratedStateThatExpiredUnderEitherLimitStartsOver() {
        MemoryStore store = store(10);
        long t0 = now.get();
        RateLimiter l = RateLimiter.builder(Rule.of("rp", RefreshPeriod.of(1, Duration.ofSeconds(1))))
                .store(store).build();
        assertThat(l.tryAcquire("k").allowed()).isTrue();
        Decision reserved = l.reserve("k", 5, Duration.ofSeconds(10));
        assertThat(reserved.waitMicros()).isEqualTo(5_000_000);
        // a debt of 5 takes 6 refills at 1 per cycle (expiry at 7 s), but 2 at 100 per cycle (expiry at 3 s)
        now.set(t0 + 4_500_000);
        l.updateLimit(RefreshPeriod.of(100, Duration.ofSeconds(1)));
        Decision d = l.tryAcquire("k");
        assertThat(d.remaining()).isEqualTo(99);
        // a new key, whose cycles start now (the old one's next cycle would start in 0.5 s)
        assertThat(d.resetAfterMicros()).isEqualTo(1_000_000);
    }
}
