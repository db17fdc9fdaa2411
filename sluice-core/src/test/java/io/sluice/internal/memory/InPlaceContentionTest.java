package io.sluice.internal.memory;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Clock;
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
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Threads stepping one key's {@link Cell} in place (on a copy, written back holding the cell's write; rejections and
 * peeks without any lock: {@link InPlaceDecider}) while other threads take the same key down the immutable paths
 * ({@code decideTogether} settles the cell into an entry and retires it; the next in-place decision makes a new
 * cell) neither lose nor duplicate a charge. No limit refills within a test but where the test steps the clock
 * itself, so the count is exact: the permits granted on the hot key add up to its capacity (and the refill the
 * test made), whatever the interleaving. Counting, not timing: nothing here depends on how fast the machine is.
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

    /**
     * Each limit with a clock that stands still and one that moves a microsecond at every reading (nothing
     * refills in the few milliseconds that makes): with it, threads decide with readings taken before they got
     * to the cell, often behind the state another thread wrote meanwhile.
     */
    static Stream<Arguments> limitsAndClocks() {
        return limits().flatMap(limit -> Stream.of(Arguments.of(limit, false), Arguments.of(limit, true)));
    }

    @ParameterizedTest(name = "{0}, clock moving: {1}")
    @MethodSource("limitsAndClocks")
    void inPlaceStepsRacingSettlesGrantExactlyTheCapacity(Limit limit, boolean moving) throws Exception {
        AtomicLong clock = new AtomicLong(1_767_225_600_000_000L);
        Clock reading = moving ? clock::incrementAndGet : clock::get;
        MemoryStore store = (MemoryStore) Store.memory().clock(reading).build();
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

    /** A limit, a step of the clock, and how many permits exactly that step frees on an exhausted key. */
    record Refill(Limit limit, long stepMicros, long freed) {
        @Override
        public String toString() {
            return limit + " stepped " + stepMicros + " µs";
        }
    }

    static Stream<Refill> refills() {
        long small = 1_000;
        Duration month = Duration.ofDays(30);
        long interval = month.toNanos() / 1_000 / small;
        return Stream.of(
                new Refill(TokenBucket.of(small, 400, Duration.ofHours(1)), Duration.ofHours(1).toNanos() / 1_000, 400),
                new Refill(Gcra.of(small, month), 400 * interval, 400),
                // A step of one window lands in the next window, wherever in its window the clock started.
                new Refill(FixedWindow.of(small, month), month.toNanos() / 1_000, small));
    }

    /**
     * While threads hammer an exhausted key (read-only rejections, no lock), one thread steps the clock: the
     * permits it frees are granted exactly once in all, to whoever comes first, and nothing more.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("refills")
    void aRefillWhileThreadsRejectWithoutLockingIsGrantedExactlyOnce(Refill refill) throws Exception {
        AtomicLong clock = new AtomicLong(1_767_225_600_000_000L);
        MemoryStore store = (MemoryStore) Store.memory().clock(clock::get).build();
        Rule rule = Rule.of("r", refill.limit());
        long capacity = store.decide(rule, "hot", Request.peek(0)).remaining();
        int tries = 1_500;
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        CountDownLatch start = new CountDownLatch(1);
        try {
            List<Future<Long>> results = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int thread = t;
                results.add(pool.submit(() -> {
                    start.await();
                    long granted = 0;
                    if (thread == 0) {
                        // Waits for the others to exhaust the key, steps the clock once, then keeps asking: it
                        // alone has tries enough for all the refill, whenever the others finish.
                        while (store.decide(rule, "hot", Request.peek(0)).remaining() > 0) {
                            Thread.onSpinWait();
                        }
                        clock.addAndGet(refill.stepMicros());
                        for (int i = 0; i < 2 * capacity; i++) {
                            granted += store.decide(rule, "hot", Request.tryAcquire(1)).granted();
                        }
                        return granted;
                    }
                    for (int i = 0; i < tries; i++) {
                        Decision d = i % 5 == 0 ? store.decide(rule, "hot", Request.tryAcquireAtMost(2))
                                : store.decide(rule, "hot", Request.tryAcquire(1));
                        granted += d.granted();
                    }
                    return granted;
                }));
            }
            start.countDown();
            long granted = 0;
            for (Future<Long> f : results) {
                granted += f.get(120, TimeUnit.SECONDS);
            }
            assertThat(granted).as("permits granted on the hot key").isEqualTo(capacity + refill.freed());
            assertThat(store.decide(rule, "hot", Request.peek(0)).remaining()).isZero();
        } finally {
            pool.shutdownNow();
        }
    }
}
