package io.sluice.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Concurrency;
import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.Gcra;
import io.sluice.LeakyBucket;
import io.sluice.RateLimiter;
import io.sluice.RefreshPeriod;
import io.sluice.RollingWindow;
import io.sluice.SlidingLog;
import io.sluice.SlidingWindow;
import io.sluice.SmoothBursty;
import io.sluice.SmoothWarmingUp;
import io.sluice.TokenBucket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The contract cases of each algorithm on its own: one timeline per algorithm, exact to the microsecond. */
public interface AlgorithmCases extends ContractFixture {

    // ---------------------------------------------------------------- fixed_window

    @Test
    default void fixedWindowAdmitsLimitPerEpochAlignedWindow() {
        RateLimiter l = limiter(FixedWindow.of(3, Duration.ofSeconds(1)));
        assertAdmittedWithRemaining(l.tryAcquire("k"), 2);
        assertAdmittedWithRemaining(l.tryAcquire("k"), 1);
        assertAdmittedWithRemaining(l.tryAcquire("k"), 0);
        clock().advanceMillis(250);
        Decision rejected = l.tryAcquire("k");
        assertThat(rejected.allowed()).isFalse();
        assertThat(rejected.retryAfterMicros()).isEqualTo(750 * MS);
        assertThat(rejected.limit()).isEqualTo("fixed_window");
        clock().advanceMillis(750);
        assertThat(l.tryAcquire("k").allowed()).isTrue();
    }

    @Test
    default void fixedWindowAllowsDoubleBurstAcrossBoundary() {
        RateLimiter l = limiter(FixedWindow.of(3, Duration.ofSeconds(1)));
        clock().advanceMillis(999);
        assertThat(l.tryAcquire("k", 3).allowed()).isTrue();
        clock().advanceMillis(1);
        assertThat(l.tryAcquire("k", 3).allowed()).isTrue();
    }

    // ---------------------------------------------------------------- sliding_log

    @Test
    default void slidingLogIsExactInEveryWindowAndKeepsSameMicrosecondEvents() {
        RateLimiter l = limiter(SlidingLog.of(3, Duration.ofSeconds(1)));
        assertThat(l.tryAcquire("k").allowed()).isTrue();
        assertThat(l.tryAcquire("k").allowed()).isTrue();
        assertThat(l.tryAcquire("k").allowed()).isTrue();
        clock().advanceMillis(300);
        Decision d = l.tryAcquire("k");
        assertThat(d.allowed()).isFalse();
        assertThat(d.retryAfterMicros()).isEqualTo(700 * MS);
        clock().advanceMillis(699);
        assertThat(l.tryAcquire("k").allowed()).isFalse();
        clock().advanceMillis(1);
        assertThat(l.tryAcquire("k", 3).allowed()).isTrue();
    }

    // ---------------------------------------------------------------- sliding_window

    @Test
    default void slidingWindowWeighsThePreviousWindow() {
        RateLimiter l = limiter(SlidingWindow.of(10, Duration.ofSeconds(1)));
        assertThat(l.tryAcquire("k", 10).allowed()).isTrue();
        assertThat(l.tryAcquire("k").allowed()).isFalse();
        clock().advanceMillis(1500);
        // previous = 10 weighted by half: 5 are counted, 5 remain.
        assertThat(l.tryAcquire("k", 5).allowed()).isTrue();
        assertThat(l.tryAcquire("k").allowed()).isFalse();
    }

    // ---------------------------------------------------------------- rolling_window

    @Test
    default void rollingWindowGrantsWhatIsLeftBestEffort() {
        RateLimiter l = limiter(RollingWindow.of(10, Duration.ofSeconds(1), Duration.ofMillis(100)));
        assertThat(l.tryAcquire("k", 4).allowed()).isTrue();
        Decision partial = l.tryAcquireAtMost("k", 15);
        assertThat(partial.allowed()).isTrue();
        assertThat(partial.granted()).isEqualTo(6);
        assertThat(partial.remaining()).isEqualTo(0);
        Decision none = l.tryAcquireAtMost("k", 1);
        assertThat(none.allowed()).isFalse();
        assertThat(none.granted()).isZero();
        clock().advanceMillis(1200);
        assertThat(l.tryAcquire("k", 10).allowed()).isTrue();
    }

    // ---------------------------------------------------------------- token_bucket

    @Test
    default void tokenBucketRefillsGreedilyAndReserves() {
        RateLimiter l = limiter(TokenBucket.of(10, 10, Duration.ofSeconds(1)));
        assertThat(l.tryAcquire("k", 10).remaining()).isZero();
        Decision d = l.tryAcquire("k");
        assertThat(d.allowed()).isFalse();
        assertThat(d.retryAfterMicros()).isEqualTo(100 * MS);
        clock().advanceMillis(100);
        assertThat(l.tryAcquire("k").allowed()).isTrue();
        Decision r = l.reserve("k", 5, Duration.ofSeconds(1));
        assertThat(r.allowed()).isTrue();
        assertThat(r.waitMicros()).isEqualTo(500 * MS);
        assertThat(l.reserve("k", 10, Duration.ofSeconds(1)).allowed()).isFalse();
    }

    // ---------------------------------------------------------------- gcra

    @Test
    default void gcraReportsRedisRateValues() {
        RateLimiter l = limiter(Gcra.of(10, Duration.ofSeconds(1)));
        Decision first = l.tryAcquire("k");
        assertAdmittedWithRemaining(first, 9);
        assertThat(first.resetAfterMicros()).isEqualTo(100 * MS);
        assertAdmittedWithRemaining(l.tryAcquire("k", 9), 0);
        Decision rejected = l.tryAcquire("k");
        assertThat(rejected.allowed()).isFalse();
        assertThat(rejected.retryAfterMicros()).isEqualTo(100 * MS);
        assertThat(rejected.resetAfterMicros()).isEqualTo(S);
        clock().advanceMillis(100);
        assertThat(l.tryAcquire("k").allowed()).isTrue();
    }

    // ---------------------------------------------------------------- leaky_bucket

    @Test
    default void leakyBucketDelaysTheBurstThenRejects() throws InterruptedException {
        RateLimiter l = limiter(LeakyBucket.of(1, Duration.ofSeconds(1)).withBurst(5));
        List<Long> waits = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            Decision d = l.reserve("k", 1, Duration.ofDays(1));
            assertThat(d.allowed()).isTrue();
            waits.add(d.waitMicros());
        }
        assertThat(waits).containsExactly(0L, S, 2 * S, 3 * S, 4 * S, 5 * S);
        assertThat(l.reserve("k", 1, Duration.ofDays(1)).allowed()).isFalse();
        assertThat(l.tryAcquire("other").allowed()).isTrue();
        assertThat(l.tryAcquire("other").allowed()).isFalse();
    }

    @Test
    default void leakyBucketNodelayPassesTheBurstAtOnce() {
        RateLimiter l = limiter(LeakyBucket.of(1, Duration.ofSeconds(1)).withBurst(5).withNodelay(true));
        for (int i = 0; i < 6; i++) {
            Decision d = l.tryAcquire("k");
            assertThat(d.allowed()).isTrue();
            assertThat(d.waitMicros()).isZero();
        }
        assertThat(l.tryAcquire("k").allowed()).isFalse();
    }

    // ---------------------------------------------------------------- smooth (Guava)

    @Test
    default void smoothBurstyMatchesGuavaTestSimple() throws InterruptedException {
        RateLimiter l = limiter(SmoothBursty.of(5.0));
        // A key without state is idle with its burst saved: the 5 saved permits and one fresh at once, as an
        // idle Guava limiter; then Guava's testSimple, each request paying for the previous one.
        l.acquire("k", 6, Duration.ofDays(1));
        l.acquire("k", 1, Duration.ofDays(1));
        l.acquire("k", 1, Duration.ofDays(1));
        l.acquire("k", 1, Duration.ofDays(1));
        assertThat(clock().takeSleeps()).containsExactly(0L, 200 * MS, 200 * MS, 200 * MS);
    }

    @Test
    default void smoothWarmingUpMatchesGuavaTestWarmUp() throws InterruptedException {
        RateLimiter l = limiter(SmoothWarmingUp.of(2.0, Duration.ofMillis(4000)));
        for (int i = 0; i < 8; i++) {
            l.acquire("k", 1, Duration.ofDays(1));
        }
        // Guava RateLimiterTest.testWarmUp: R0.00, R1.38, R1.13, R0.88, R0.63, R0.50, R0.50, R0.50
        assertThat(clock().takeSleeps().stream().map(us -> Math.round(us / 10_000.0) / 100.0))
                .containsExactly(0.0, 1.38, 1.13, 0.88, 0.63, 0.5, 0.5, 0.5);
    }

    // ---------------------------------------------------------------- refresh_period (Resilience4j)

    @Test
    default void refreshPeriodReservesPermitsOfTheNextCycle() {
        RateLimiter l = limiter(RefreshPeriod.of(2, Duration.ofSeconds(1)));
        assertThat(l.tryAcquire("k").allowed()).isTrue();
        clock().advanceMillis(400);
        assertThat(l.tryAcquire("k").allowed()).isTrue();
        Decision rejected = l.tryAcquire("k");
        assertThat(rejected.allowed()).isFalse();
        assertThat(rejected.retryAfterMicros()).isEqualTo(600 * MS);
        Decision reserved = l.reserve("k", 1, Duration.ofSeconds(1));
        assertThat(reserved.allowed()).isTrue();
        assertThat(reserved.waitMicros()).isEqualTo(600 * MS);
        clock().advanceMillis(600);
        assertThat(l.tryAcquire("k").allowed()).isTrue();
        assertThat(l.tryAcquire("k").allowed()).isFalse();
    }

    // ---------------------------------------------------------------- concurrency

    @Test
    default void concurrencyLeasesAreReleasedOrExpire() {
        RateLimiter l = limiter(Concurrency.of(2, Duration.ofSeconds(10)));
        Decision a = l.tryAcquire("k");
        Decision b = l.tryAcquire("k");
        assertThat(a.lease()).isNotEqualTo(Decision.NO_LEASE).isNotEqualTo(b.lease());
        Decision full = l.tryAcquire("k");
        assertThat(full.allowed()).isFalse();
        assertThat(full.retryAfterMicros()).isEqualTo(10 * S);
        assertThat(l.release("k", a.lease())).isTrue();
        assertThat(l.release("k", a.lease())).isFalse();
        Decision c = l.tryAcquire("k");
        assertThat(c.allowed()).isTrue();
        clock().advance(Duration.ofSeconds(10));
        assertThat(l.release("k", b.lease())).isFalse();
        assertThat(l.tryAcquire("k", 2).allowed()).isTrue();
    }
}
