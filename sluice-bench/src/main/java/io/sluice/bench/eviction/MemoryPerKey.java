package io.sluice.bench.eviction;

import io.sluice.FixedWindow;
import io.sluice.Gcra;
import io.sluice.Limit;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.Store;
import io.sluice.TokenBucket;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.List;

/**
 * Heap per key of the in-memory store, the figure that sizes {@code maxKeys} against the heap
 * (docs/memory-store.md): for a few algorithms, the heap in use (after full collections) before and after
 * one request on each of {@code N} keys shaped like {@code user:1234567}, divided by {@code N}. Keys, map
 * nodes, holders, entries and states are all counted: everything a key keeps alive.
 *
 * <pre>
 * java -Xmx2g -cp sluice-bench/target/sluice-bench.jar io.sluice.bench.eviction.MemoryPerKey [N]
 * </pre>
 */
public final class MemoryPerKey {
    private MemoryPerKey() {}

    public static void main(String[] args) throws InterruptedException {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
        List<Limit> limits = List.of(TokenBucket.of(100, 10, Duration.ofSeconds(1)), Gcra.of(10, Duration.ofSeconds(1)),
                FixedWindow.of(100, Duration.ofMinutes(1)));
        for (Limit limit : limits) {
            Store store = Store.memory().maxKeys(n).build();
            RateLimiter limiter = RateLimiter.builder(Rule.of("r", limit)).store(store).build();
            long before = heapUsed();
            for (int i = 0; i < n; i++) {
                limiter.tryAcquire("user:" + (1_000_000 + i));
            }
            long after = heapUsed();
            System.out.printf("%-14s %,d keys: %.0f bytes per key%n", limit.algorithm(), n, (double) (after - before) / n);
            limiter.close();
        }
    }

    private static long heapUsed() throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(100);
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
