package io.sluice.internal.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.FixedWindow;
import io.sluice.RateLimiter;
import io.sluice.Rule;
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
}
