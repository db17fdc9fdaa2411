package io.sluice.internal.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.RateLimiter;
import io.sluice.RefreshPeriod;
import io.sluice.Rule;
import io.sluice.SmoothBursty;
import io.sluice.Store;
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
    void expiredKeysAreSweptAway() {
        MemoryStore store = store(1_000_000);
        RateLimiter limiter = limiter(store, 1, Duration.ofSeconds(1));
        for (int i = 0; i < 10_000; i++) {
            assertThat(limiter.tryAcquire("k" + i).allowed()).isTrue();
        }
        assertThat(store.size()).isEqualTo(10_000);
        now.addAndGet(1_000_000);
        for (int i = 0; i < 10_000; i++) {
            limiter.tryAcquire("hot");
        }
        assertThat(store.size()).isEqualTo(1);
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
        assertThat(l.tryAcquire("k").allowed()).isTrue();
        assertThat(alone.tryAcquire("k").allowed()).isTrue();
        now.addAndGet(1_199_999);
        assertThat(l.peek("k", 0).remaining()).isEqualTo(4);
        now.addAndGet(1);
        // smooth_bursty is full, so its state expired: it comes back as a new limiter with nothing saved, as it
        // does alone in its rule and in the Redis store, though the fixed window keeps the entry alive
        assertThat(alone.peek("k", 0).remaining()).isZero();
        Decision d = l.peek("k", 0);
        assertThat(d.remaining()).isZero();
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
