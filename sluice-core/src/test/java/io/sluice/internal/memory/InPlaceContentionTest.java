package io.sluice.internal.memory;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.Gcra;
import io.sluice.Limit;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.SlidingWindow;
import io.sluice.Store;
import io.sluice.Store.Target;
import io.sluice.TokenBucket;
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
 * Threads stepping one key's {@link Cell} in place while other threads take the same key down the immutable
 * paths ({@code decideTogether} settles the cell into an entry and retires it; the next in-place decision makes
 * a new cell) neither lose nor duplicate a charge. The clock stands still and no limit refills within the test,
 * so the count is exact: the permits granted on the hot key add up to its capacity, whatever the interleaving.
 * Counting, not timing: nothing here depends on how fast the machine is.
 */
class InPlaceContentionTest {

    private static final long CAPACITY = 3_000;
    private static final int THREADS = 8;
    private static final int TRIES_PER_THREAD = 1_500;

    static Stream<Limit> limits() {
        return Stream.of(TokenBucket.of(CAPACITY, 1, Duration.ofHours(1)),
                Gcra.of(CAPACITY, Duration.ofDays(30)),
                FixedWindow.of(CAPACITY, Duration.ofDays(30)),
                SlidingWindow.of(CAPACITY, Duration.ofDays(30)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("limits")
    void inPlaceStepsRacingSettlesGrantExactlyTheCapacity(Limit limit) throws Exception {
        long now = 1_767_225_600_000_000L;
        MemoryStore store = (MemoryStore) Store.memory().clock(() -> now).build();
        Rule rule = Rule.of("r", limit);
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        CountDownLatch start = new CountDownLatch(1);
        try {
            List<Future<long[]>> results = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int thread = t;
                results.add(pool.submit(() -> {
                    start.await();
                    long granted = 0;
                    long settles = 0;
                    for (int i = 0; i < TRIES_PER_THREAD; i++) {
                        Decision d;
                        if (thread % 4 == 3 && i % 8 == 0) {
                            // Charges "hot" and a key of its own through the immutable path.
                            d = store.decideTogether(List.of(new Target(rule, "hot"),
                                    new Target(rule, "side-" + thread + "-" + i)), Request.tryAcquire(1));
                            settles++;
                        } else if (i % 5 == 0) {
                            d = store.decide(rule, "hot", Request.tryAcquireAtMost(3));
                        } else if (i % 7 == 0) {
                            d = store.decide(rule, "hot", Request.peek(1));
                            assertThat(d.granted()).isZero();
                        } else {
                            d = store.decide(rule, "hot", Request.tryAcquire(1));
                        }
                        granted += d.granted();
                    }
                    return new long[] {granted, settles};
                }));
            }
            start.countDown();
            long granted = 0;
            long settles = 0;
            for (Future<long[]> f : results) {
                long[] r = f.get(120, TimeUnit.SECONDS);
                granted += r[0];
                settles += r[1];
            }
            assertThat(settles).isPositive();
            assertThat(granted).as("permits granted on the hot key").isEqualTo(CAPACITY);
            assertThat(store.decide(rule, "hot", Request.peek(0)).remaining()).isZero();
        } finally {
            pool.shutdownNow();
        }
    }
}
