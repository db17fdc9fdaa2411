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
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The two ways {@link InPlaceDecider} steps a cell, and the hint in the cell's version word that chooses between
 * them: in place (holding the write, taken by one compare-and-set) while the cell is uncontended and admitting, on
 * a copy (rejections without any lock or write) once it rejects or is contended. The version is read where the
 * test alone touches the store, so the counts are exact; the race at the end counts permits, not time.
 */
class InPlaceDeciderTest {

    private static final long CAPACITY = 100;
    /** Long enough for every limit below to be full again (token_bucket refills one token an hour). */
    private static final Duration REFILL = Duration.ofDays(60);

    static Stream<Limit> limits() {
        return Stream.of(TokenBucket.of(CAPACITY, 1, Duration.ofHours(1)),
                Gcra.of(CAPACITY, Duration.ofDays(30)),
                FixedWindow.of(CAPACITY, Duration.ofDays(30)),
                SlidingWindow.of(CAPACITY, Duration.ofDays(30)));
    }

    /** A store on a clock that moves only when the test moves it, and the rule of {@code limit}. */
    private record Fixture(AtomicLong clock, MemoryStore store, Rule rule) {
        static Fixture of(Limit limit) {
            AtomicLong clock = new AtomicLong(1_767_225_600_000_000L);
            return new Fixture(clock, (MemoryStore) Store.memory().clock(clock::get).build(), Rule.of("r", limit));
        }

        Decision decide(Request request) {
            return store.decide(rule, "hot", request);
        }

        /** The hot key's cell version, read while no other thread decides. */
        int version() {
            Cell cell = store.holderOf("r", "hot").get().cell();
            assertThat(cell).as("the key steps in place").isNotNull();
            return cell.versionBeforeRead();
        }
    }

    private static boolean readFirst(int version) {
        return (version & Cell.READ_FIRST) != 0;
    }

    /** Writes counted by the version: it moves by 4 per write, above the write-under-way bit and the hint. */
    private static int writes(int version) {
        return version >>> 2;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("limits")
    void oneThreadAdmittingStepsInPlaceOneWriteEachAndNeverSetsTheHint(Limit limit) {
        Fixture f = Fixture.of(limit);
        assertThat(f.decide(Request.tryAcquire(1)).allowed()).isTrue();    // makes the cell
        int start = f.version();
        for (int i = 1; i < CAPACITY; i++) {
            assertThat(f.decide(Request.tryAcquire(1)).allowed()).isTrue();
            int v = f.version();
            assertThat(readFirst(v)).as("hint after admission %d", i).isFalse();
            assertThat(writes(v) - writes(start)).isEqualTo(i);
        }
        assertThat(f.decide(Request.peek(0)).remaining()).isZero();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("limits")
    void aRejectionSetsTheHintAndTheRejectionsAfterItWriteNothing(Limit limit) {
        Fixture f = Fixture.of(limit);
        long granted = 0;
        for (int i = 0; i < CAPACITY; i++) {
            granted += f.decide(Request.tryAcquire(1)).granted();
        }
        assertThat(granted).isEqualTo(CAPACITY);
        assertThat(f.decide(Request.tryAcquire(1)).allowed()).isFalse();   // in place: sets the hint
        int afterFirst = f.version();
        assertThat(readFirst(afterFirst)).isTrue();
        for (int i = 0; i < 50; i++) {
            Decision d = f.decide(Request.tryAcquire(1));
            assertThat(d.allowed()).isFalse();
            assertThat(d.retryAfterMicros()).isPositive();
        }
        assertThat(f.version()).as("read-only rejections leave the version alone").isEqualTo(afterFirst);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("limits")
    void admissionsAfterARefillClearTheHintWithin64WritesAndThenStepInPlace(Limit limit) {
        Fixture f = Fixture.of(limit);
        for (int i = 0; i <= CAPACITY; i++) {
            f.decide(Request.tryAcquire(1));
        }
        assertThat(readFirst(f.version())).isTrue();
        f.clock.addAndGet(REFILL.toNanos() / 1_000);
        int admissions = 0;
        while (readFirst(f.version())) {
            int before = f.version();
            assertThat(f.decide(Request.tryAcquire(1)).allowed()).isTrue();
            assertThat(writes(f.version()) - writes(before)).as("one write per admission").isEqualTo(1);
            admissions++;
            assertThat(admissions).as("admissions before the hint clears").isLessThanOrEqualTo(64);
        }
        for (int i = 0; i < 10; i++) {
            int before = f.version();
            assertThat(f.decide(Request.tryAcquire(1)).allowed()).isTrue();
            assertThat(readFirst(f.version())).isFalse();
            assertThat(writes(f.version()) - writes(before)).isEqualTo(1);
        }
        assertThat(f.decide(Request.peek(0)).remaining()).isEqualTo(CAPACITY - admissions - 10);
    }

    /**
     * One thread admits while three others ask for the whole capacity (rejected: the first thread took a permit
     * before they start) and peek, with a clock that stands still. The admitting thread's decisions move between
     * the in-place path and the copy path as the others' rejections set the hint and its own admissions clear it;
     * the readers' optimistic copies race its in-place writes. Nothing refills, so a reader is never told a
     * remaining above the one it was told before, and the admissions add up to the capacity exactly. (With the
     * clock still, an admission changes little more than one integer, so a torn read would mostly look like a
     * state the key held: {@code CellTest} checks that a read overlapping a write never validates.)
     */
    static Stream<Limit> raceLimits() {
        long capacity = 3_000;
        return Stream.of(TokenBucket.of(capacity, 1, Duration.ofHours(1)),
                Gcra.of(capacity, Duration.ofDays(30)),
                FixedWindow.of(capacity, Duration.ofDays(30)),
                SlidingWindow.of(capacity, Duration.ofDays(30)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("raceLimits")
    void inPlaceWritesRacingLockFreeReadersGrantTheCapacityAndShowNoTornState(Limit limit) throws Exception {
        Fixture f = Fixture.of(limit);
        long capacity = f.decide(Request.peek(0)).remaining();
        long first = f.decide(Request.tryAcquire(1)).granted();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        CountDownLatch start = new CountDownLatch(1);
        try {
            Future<Long> admitting = pool.submit(() -> {
                start.await();
                long granted = 0;
                for (long i = 0; i < 2 * capacity; i++) {
                    granted += f.decide(Request.tryAcquire(1)).granted();
                }
                return granted;
            });
            List<Future<Long>> readers = new ArrayList<>();
            for (int t = 0; t < 3; t++) {
                readers.add(pool.submit(() -> {
                    start.await();
                    long last = capacity;
                    long told = 0;
                    for (int i = 0; i < 4_000; i++) {
                        Decision d = i % 2 == 0 ? f.decide(Request.tryAcquire(capacity)) : f.decide(Request.peek(0));
                        assertThat(d.granted()).isZero();
                        assertThat(d.remaining()).as("remaining told after %d", last).isBetween(0L, last);
                        last = d.remaining();
                        told++;
                    }
                    return told;
                }));
            }
            start.countDown();
            assertThat(first + admitting.get(120, TimeUnit.SECONDS)).as("permits granted").isEqualTo(capacity);
            for (Future<Long> r : readers) {
                assertThat(r.get(120, TimeUnit.SECONDS)).isEqualTo(4_000);
            }
            assertThat(f.decide(Request.peek(0)).remaining()).isZero();
        } finally {
            pool.shutdownNow();
        }
    }
}
