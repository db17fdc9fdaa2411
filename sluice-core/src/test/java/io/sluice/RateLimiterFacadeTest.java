package io.sluice;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class RateLimiterFacadeTest {

    @Test
    void acquireHonoursInterruptionWhileWaiting() throws Exception {
        try (RateLimiter limiter = RateLimiter.builder(Rule.of("r", FixedWindow.of(1, Duration.ofHours(1)))).build()) {
            assertThat(limiter.tryAcquire("k").allowed()).isTrue();
            CompletableFuture<Throwable> thrown = new CompletableFuture<>();
            Thread waiter = new Thread(() -> {
                try {
                    limiter.acquire("k", 1, Duration.ofDays(1));
                    thrown.complete(null);
                } catch (Throwable t) {
                    thrown.complete(t);
                }
            });
            waiter.start();
            Thread.sleep(100);
            waiter.interrupt();
            assertThat(thrown.get(10, TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class);
        }
    }

    @Test
    void reserveReturnsTheWaitWithoutSleepingAndAcquireSleepsIt() throws InterruptedException {
        AtomicLong now = new AtomicLong(1_767_225_600_000_000L);
        List<Long> sleeps = new ArrayList<>();
        Sleeper sleeper = micros -> {
            sleeps.add(micros);
            now.addAndGet(micros);
        };
        try (RateLimiter limiter = RateLimiter.builder(Rule.of("r", SmoothBursty.of(2)))
                .store(Store.memory().clock(now::get).build()).sleeper(sleeper).build()) {
            // a key without state is idle with its burst (2 permits) saved: spend it, then permits cost 500 ms each
            assertThat(limiter.tryAcquire("k", 2).allowed()).isTrue();
            assertThat(limiter.reserve("k", 1, Duration.ofSeconds(5)).waitMicros()).isZero();
            assertThat(limiter.reserve("k", 1, Duration.ofSeconds(5)).waitMicros()).isEqualTo(500_000);
            assertThat(sleeps).isEmpty();
            Decision d = limiter.acquire("k", 1, Duration.ofSeconds(5));
            assertThat(d.waitMicros()).isEqualTo(1_000_000);
            assertThat(sleeps).containsExactly(1_000_000L);
            // A wait beyond maxWait fails fast and reserves nothing.
            Decision tooLong = limiter.acquire("k", 1, Duration.ofMillis(100));
            assertThat(tooLong.allowed()).isFalse();
            assertThat(tooLong.retryAfterMicros()).isEqualTo(500_000);
            assertThat(sleeps).containsExactly(1_000_000L);
        }
    }

    @Test
    void acquireWithoutMaxWaitUsesTheRefreshPeriodTimeout() throws InterruptedException {
        AtomicLong now = new AtomicLong(1_767_225_600_000_000L);
        try (RateLimiter limiter = RateLimiter.builder(Rule.of("r",
                        RefreshPeriod.of(1, Duration.ofSeconds(10)).withTimeout(Duration.ofSeconds(1))))
                .store(Store.memory().clock(now::get).build()).sleeper(now::addAndGet).build()) {
            assertThat(limiter.acquire("k", 1).allowed()).isTrue();
            assertThat(limiter.acquire("k", 1).allowed()).isFalse();
            now.addAndGet(9_500_000);
            assertThat(limiter.acquire("k", 1).allowed()).isTrue();
        }
    }

    @Test
    void decisionRoundsRetryAfterUpForHeaders() {
        Decision d = new Decision(false, 0, 0, 1_000_001, 0, 0, "x", Decision.NO_LEASE);
        assertThat(d.retryAfterSeconds()).isEqualTo(2);
        assertThat(d.retryAfter()).isEqualTo(Duration.ofNanos(1_000_001_000));
        assertThat(new Decision(false, 0, 0, 1_000_000, 0, 0, "x", -1).retryAfterSeconds()).isEqualTo(1);
    }

    @Test
    void aListenerWrittenWithoutKeysStillHearsEveryDecision() {
        List<String> heard = new ArrayList<>();
        SluiceListener keyless = new SluiceListener() {
            @Override
            public void onDecision(Rule rule, Decision decision) {
                heard.add(rule.name() + ":" + decision.allowed());
            }
        };
        try (RateLimiter limiter = RateLimiter.builder(Rule.of("r", FixedWindow.of(1, Duration.ofHours(1))))
                .listener(keyless).build()) {
            limiter.tryAcquire("a");
            limiter.tryAcquire("a");
            limiter.tryAcquireAsync("b", 1).join();
        }
        assertThat(heard).containsExactly("r:true", "r:false", "r:true");
    }
}
