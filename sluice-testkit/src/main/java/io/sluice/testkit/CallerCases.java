package io.sluice.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.Concurrency;
import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.SlidingLog;
import io.sluice.SluiceListener;
import io.sluice.TokenBucket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The contract cases of the limiter's calls as a caller sees them: peek, reset, acquire, updateLimit, async,
 * invalid input, listeners and many threads on one key.
 */
public interface CallerCases extends ContractFixture {

    @Test
    default void peekChargesNothing() {
        RateLimiter l = limiter(FixedWindow.of(2, Duration.ofMinutes(1)));
        assertThat(l.peek("k", 0).remaining()).isEqualTo(2);
        Decision p = l.peek("k", 2);
        assertThat(p.allowed()).isTrue();
        assertThat(p.granted()).isZero();
        assertThat(l.tryAcquire("k", 2).allowed()).isTrue();
        assertThat(l.peek("k", 1).allowed()).isFalse();
        assertThat(l.peek("k", 0).remaining()).isZero();
    }

    @Test
    default void keysAndRulesAreIsolated() {
        RateLimiter a = limiter(FixedWindow.of(1, Duration.ofMinutes(1)));
        RateLimiter b = limiter(FixedWindow.of(1, Duration.ofMinutes(1)));
        assertThat(a.tryAcquire("k").allowed()).isTrue();
        assertThat(a.tryAcquire("k2").allowed()).isTrue();
        assertThat(b.tryAcquire("k").allowed()).isTrue();
        assertThat(a.tryAcquire("k").allowed()).isFalse();
    }

    @Test
    default void resetForgetsTheKey() {
        RateLimiter l = limiter(FixedWindow.of(1, Duration.ofMinutes(1)), SlidingLog.of(1, Duration.ofMinutes(1)));
        assertThat(l.tryAcquire("k").allowed()).isTrue();
        assertThat(l.tryAcquire("k").allowed()).isFalse();
        l.reset("k");
        assertThat(l.tryAcquire("k").allowed()).isTrue();
    }

    @Test
    default void acquireWaitsForWindowsByPollingAndFailsFastBeyondMaxWait() throws InterruptedException {
        RateLimiter l = limiter(FixedWindow.of(1, Duration.ofSeconds(1)));
        assertThat(l.acquire("k", 1, Duration.ZERO).allowed()).isTrue();
        Decision tooLong = l.acquire("k", 1, Duration.ofMillis(999));
        assertThat(tooLong.allowed()).isFalse();
        assertThat(clock().takeSleeps()).containsExactly(0L);
        Decision waited = l.acquire("k", 1, Duration.ofSeconds(1));
        assertThat(waited.allowed()).isTrue();
        assertThat(clock().takeSleeps()).containsExactly(S, 0L);
    }

    @Test
    default void acquireReservesNothingWhenTheWaitIsTooLong() throws InterruptedException {
        RateLimiter l = limiter(TokenBucket.of(1, 1, Duration.ofSeconds(1)));
        assertThat(l.tryAcquire("k").allowed()).isTrue();
        assertThat(l.acquire("k", 1, Duration.ofMillis(500)).allowed()).isFalse();
        clock().advanceMillis(1000);
        assertThat(l.tryAcquire("k").allowed()).isTrue();
    }

    @Test
    default void updateLimitKeepsStateAsDocumented() {
        RateLimiter l = limiter(TokenBucket.of(10, 1, Duration.ofSeconds(1)));
        assertThat(l.tryAcquire("k", 10).allowed()).isTrue();
        l.updateLimit(TokenBucket.of(20, 1, Duration.ofSeconds(1)));
        assertThat(l.tryAcquire("k").allowed()).isFalse();
        clock().advanceMillis(1000);
        assertThat(l.tryAcquire("k").allowed()).isTrue();
        RateLimiter f = limiter(FixedWindow.of(2, Duration.ofMinutes(1)));
        assertThat(f.tryAcquire("k", 2).allowed()).isTrue();
        f.updateLimit(FixedWindow.of(3, Duration.ofMinutes(1)));
        assertThat(f.tryAcquire("k").remaining()).isZero();
        assertThatThrownBy(() -> f.updateLimit(FixedWindow.of(3, Duration.ofMinutes(1)).named("nope")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("limit");
    }

    @Test
    default void asyncVariantsDecideLikeTheSyncOnes() throws Exception {
        RateLimiter l = limiter(FixedWindow.of(2, Duration.ofMinutes(1)), Concurrency.of(5, Duration.ofSeconds(5)));
        Decision a = l.tryAcquireAsync("k", 1).get(5, TimeUnit.SECONDS);
        assertThat(a.allowed()).isTrue();
        assertThat(l.peekAsync("k", 1).get(5, TimeUnit.SECONDS).allowed()).isTrue();
        assertThat(l.tryAcquireAtMostAsync("k", 5).get(5, TimeUnit.SECONDS).granted()).isEqualTo(1);
        assertThat(l.reserveAsync("k", 1, Duration.ZERO).get(5, TimeUnit.SECONDS).allowed()).isFalse();
        assertThat(l.releaseAsync("k", a.lease()).get(5, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<Decision> acquired = l.acquireAsync("other", 1, Duration.ZERO);
        assertThat(acquired.get(5, TimeUnit.SECONDS).allowed()).isTrue();
    }

    @Test
    default void invalidRequestsFailBeforeAnythingIsCharged() {
        RateLimiter l = limiter(FixedWindow.of(2, Duration.ofMinutes(1)));
        assertThatThrownBy(() -> l.tryAcquire("k", 3)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("permits").hasMessageContaining("[1, 2]");
        assertThatThrownBy(() -> l.tryAcquire("k", 0)).hasMessageContaining("permits");
        assertThatThrownBy(() -> l.tryAcquire("", 1)).hasMessageContaining("key");
        assertThatThrownBy(() -> l.tryAcquire(null, 1)).hasMessageContaining("key");
        assertThatThrownBy(() -> l.tryAcquire("x".repeat(513), 1)).hasMessageContaining("key");
        assertThatThrownBy(() -> l.reserve("k", 1, Duration.ofSeconds(-1))).hasMessageContaining("maxWait");
        assertThat(l.tryAcquire("k", 2).allowed()).isTrue();
    }

    // ---------------------------------------------------------------- events

    /** One decision as a listener heard it. */
    record Heard(String rule, String key, boolean allowed, String limit) {}

    @Test
    default void listenersHearEachDecisionWithItsKey() throws Exception {
        List<Heard> heard = java.util.Collections.synchronizedList(new ArrayList<>());
        SluiceListener audit = new SluiceListener() {
            @Override
            public void onDecision(Rule rule, String key, Decision decision) {
                heard.add(new Heard(rule.name(), key, decision.allowed(), decision.limit()));
            }
        };
        Rule rule = Rule.of("contract-" + UUID.randomUUID(), FixedWindow.of(1, Duration.ofMinutes(1)));
        String tenant = "tenant:\u00e9t\u00e9/\ud83d\ude00 7";
        try (RateLimiter l = RateLimiter.builder(rule).store(store()).sleeper(clock()).listener(audit).build()) {
            assertThat(l.tryAcquire("user:1").allowed()).isTrue();
            assertThat(l.tryAcquire("user:1").allowed()).isFalse();
            assertThat(l.tryAcquireAsync(tenant, 1).get(5, TimeUnit.SECONDS).allowed()).isTrue();
            assertThat(l.peek("user:2", 1).allowed()).isTrue();
            l.reset("user:1");
        }
        assertThat(heard).containsExactly(
                new Heard(rule.name(), "user:1", true, "fixed_window"),
                new Heard(rule.name(), "user:1", false, "fixed_window"),
                new Heard(rule.name(), tenant, true, "fixed_window"),
                new Heard(rule.name(), "user:2", true, "fixed_window"));
    }

    // ---------------------------------------------------------------- concurrency of callers

    @Test
    default void manyThreadsOnOneKeyAdmitExactlyTheLimit() throws Exception {
        RateLimiter l = limiter(FixedWindow.of(1000, Duration.ofHours(1)), SlidingLog.of(1500, Duration.ofHours(1)),
                TokenBucket.of(2000, 1, Duration.ofHours(1)));
        int n = threads();
        ExecutorService pool = Executors.newFixedThreadPool(n);
        CountDownLatch start = new CountDownLatch(1);
        try {
            List<Future<Integer>> results = new ArrayList<>();
            for (int t = 0; t < n; t++) {
                results.add(pool.submit(() -> {
                    start.await();
                    int admitted = 0;
                    for (int i = 0; i < 150; i++) {
                        if (l.tryAcquire("hot").allowed()) {
                            admitted++;
                        }
                    }
                    return admitted;
                }));
            }
            start.countDown();
            int total = 0;
            for (Future<Integer> f : results) {
                total += f.get(60, TimeUnit.SECONDS);
            }
            assertThat(total).isEqualTo(1000);
        } finally {
            pool.shutdownNow();
        }
    }
}
