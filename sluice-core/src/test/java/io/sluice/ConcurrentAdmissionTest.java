package io.sluice;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * 16 threads hammering one key admit exactly what one thread making the same number of requests admits: the
 * compare-and-set loop neither loses nor duplicates a charge. The clock stands still, so the serial answer is
 * deterministic.
 */
class ConcurrentAdmissionTest {

    private static final int THREADS = 16;
    private static final int TRIES_PER_THREAD = 500;

    static Stream<Limit> limits() {
        Duration minute = Duration.ofMinutes(1);
        return Stream.of(
                FixedWindow.of(3000, minute),
                SlidingLog.of(2500, minute),
                SlidingWindow.of(3000, minute),
                RollingWindow.of(3000, minute, Duration.ofSeconds(1)),
                TokenBucket.of(3000, 1, minute),
                Gcra.of(3000, minute),
                LeakyBucket.of(10, minute).withBurst(2999).withNodelay(true),
                SmoothBursty.of(10).withMaxBurstSeconds(300),
                SmoothWarmingUp.of(10, minute),
                RefreshPeriod.of(3000, minute),
                Concurrency.of(3000, minute));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("limits")
    void manyThreadsAdmitExactlyWhatOneThreadAdmits(Limit limit) throws Exception {
        long serial = admitted(limit, 1, THREADS * TRIES_PER_THREAD);
        long parallel = admitted(limit, THREADS, TRIES_PER_THREAD);
        assertThat(parallel).isEqualTo(serial);
        assertThat(serial).isPositive().isLessThan(THREADS * TRIES_PER_THREAD);
    }

    private static long admitted(Limit limit, int threads, int triesEach) throws Exception {
        long now = 1_767_225_600_000_000L;
        Store store = Store.memory().clock(() -> now).build();
        // (A fresh smooth key admits only its first request while the clock stands still: still exact.)
        try (RateLimiter limiter = RateLimiter.builder(Rule.of("r", limit)).store(store).build()) {
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            CountDownLatch start = new CountDownLatch(1);
            try {
                List<Future<Long>> results = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    results.add(pool.submit(() -> {
                        start.await();
                        long admitted = 0;
                        for (int i = 0; i < triesEach; i++) {
                            admitted += limiter.tryAcquire("hot").allowed() ? 1 : 0;
                        }
                        return admitted;
                    }));
                }
                start.countDown();
                long total = 0;
                for (Future<Long> f : results) {
                    total += f.get(60, TimeUnit.SECONDS);
                }
                return total;
            } finally {
                pool.shutdownNow();
            }
        }
    }
}
