package io.sluice.internal.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.Concurrency;
import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.RateLimiter;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.Store;
import io.sluice.Store.Target;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The memory store's {@link MemoryStore#decideTogether}: the locks it takes leave no trace (key count, entries of
 * rejected fresh keys), and single-key decisions, resets and opposite-order batches racing it stay consistent.
 */
class DecideTogetherTest {

    private final AtomicLong now = new AtomicLong(1_767_225_600_000_000L);
    private final Rule a = Rule.of("a", FixedWindow.of(2, Duration.ofMinutes(1)));
    private final Rule b = Rule.of("b", FixedWindow.of(1, Duration.ofMinutes(1)));

    private MemoryStore store(long maxKeys) {
        return (MemoryStore) Store.memory().clock(now::get).maxKeys(maxKeys).build();
    }

    @Test
    void aRejectionOfFreshKeysLeavesNoKeyBehind() {
        MemoryStore store = store(1_000);
        store.decide(b, "k", Request.tryAcquire(1));
        assertThat(store.size()).isEqualTo(1);
        Decision d = store.decideTogether(List.of(new Target(a, "fresh"), new Target(b, "k")), Request.tryAcquire(1));
        assertThat(d.allowed()).isFalse();
        assertThat(d.limit()).isEqualTo("fixed_window");
        assertThat(store.size()).isEqualTo(1);    // the holder created to lock "fresh" left with the lock
        assertThat(store.decide(a, "fresh", Request.peek(0)).remaining()).isEqualTo(2);
    }

    @Test
    void anAdmissionKeepsEveryKeyAndCountsIt() {
        MemoryStore store = store(1_000);
        assertThat(store.decideTogether(List.of(new Target(a, "x"), new Target(b, "x")), Request.tryAcquire(1))
                .allowed()).isTrue();
        assertThat(store.size()).isEqualTo(2);
        assertThat(store.decide(a, "x", Request.peek(0)).remaining()).isEqualTo(1);
        assertThat(store.decide(b, "x", Request.peek(0)).remaining()).isZero();
        store.reset(a, "x");
        assertThat(store.size()).isEqualTo(1);
    }

    @Test
    void keysPastMaxKeysAreEvictedAfterTheLocksAreGone() {
        MemoryStore store = store(3);
        for (int i = 0; i < 10; i++) {
            assertThat(store.decideTogether(List.of(new Target(a, "k" + i), new Target(b, "k" + i)),
                    Request.tryAcquire(1)).allowed()).isTrue();
        }
        assertThat(store.size()).isLessThanOrEqualTo(3);
    }

    @Test
    void aLeaseFromAConcurrencyLimitDecidedTogetherCanBeReleased() {
        MemoryStore store = store(1_000);
        Rule conc = Rule.of("c", Concurrency.of(1, Duration.ofMinutes(1)));
        Decision d = store.decideTogether(List.of(new Target(a, "x"), new Target(conc, "x")), Request.tryAcquire(1));
        assertThat(d.lease()).isNotEqualTo(Decision.NO_LEASE);
        assertThat(store.decideTogether(List.of(new Target(a, "y"), new Target(conc, "x")), Request.tryAcquire(1))
                .allowed()).isFalse();
        assertThat(store.release(conc, "x", d.lease())).isTrue();
        assertThat(store.decide(conc, "x", Request.tryAcquire(1)).allowed()).isTrue();
    }

    @Test
    void theLimiterRefusesAnEmptyOrRepeatedKeyList() {
        RateLimiter l = RateLimiter.builder(a).store(store(1_000)).build();
        assertThatThrownBy(() -> l.tryAcquireAll(List.of(), 1)).hasMessageContaining("keys must hold at least one");
        assertThatThrownBy(() -> l.tryAcquireAll(List.of("k", "k"), 1)).hasMessageContaining("appears twice");
        assertThatThrownBy(() -> l.tryAcquireAll(List.of("k", ""), 1)).hasMessageContaining("key");
        assertThatThrownBy(() -> l.tryAcquireAll(List.of("k", "j"), 3)).hasMessageContaining("permits");
    }

    @Test
    void batchesInOppositeOrdersAndSingleDecisionsRacingThemNeitherDeadlockNorOvercharge() throws Exception {
        MemoryStore store = store(1_000_000);
        Rule big = Rule.of("big", FixedWindow.of(1_000, Duration.ofMinutes(1)));
        Rule other = Rule.of("other", FixedWindow.of(1_000, Duration.ofMinutes(1)));
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<int[]>> futures = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int thread = t;
                futures.add(pool.submit(() -> {
                    int[] admitted = new int[2];    // together, single
                    for (int i = 0; i < 400; i++) {
                        if (thread == 3 && i % 2 == 0) {
                            admitted[1] += store.decide(big, "k", Request.tryAcquire(1)).allowed() ? 1 : 0;
                            continue;
                        }
                        List<Target> targets = thread % 2 == 0
                                ? List.of(new Target(big, "k"), new Target(other, "k"))
                                : List.of(new Target(other, "k"), new Target(big, "k"));
                        admitted[0] += store.decideTogether(targets, Request.tryAcquire(1)).allowed() ? 1 : 0;
                    }
                    return admitted;
                }));
            }
            int together = 0;
            int single = 0;
            for (Future<int[]> f : futures) {
                int[] counts = f.get(60, TimeUnit.SECONDS);
                together += counts[0];
                single += counts[1];
            }
            // 1,600 attempts on "big", which admits 1,000; "other" was charged exactly the admissions together.
            assertThat(together + single).isEqualTo(1_000);
            assertThat(store.decide(big, "k", Request.peek(0)).remaining()).isZero();
            assertThat(store.decide(other, "k", Request.peek(0)).remaining()).isEqualTo(1_000 - together);
        } finally {
            pool.shutdownNow();
        }
    }
}
