package io.sluice.redis.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.RateLimiter;
import io.sluice.Store;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The fleet's expected totals are right for the algorithms themselves: every {@link FleetCase}, hammered by
 * 16 threads on the in-memory store of one JVM, admits exactly {@link FleetCase#bound}. So when
 * {@link FleetAccuracyIT} finds another total on Redis, the Redis store is wrong, not the expectation; and the
 * cases of algorithms not yet ported are checked already.
 */
class FleetCaseTest {

    @ParameterizedTest
    @EnumSource(FleetCase.class)
    void sixteenThreadsOnOneMemoryStoreAdmitExactlyTheBound(FleetCase c) throws Exception {
        long start = System.currentTimeMillis();
        ExecutorService pool = Executors.newFixedThreadPool(16);
        try (Store store = Store.memory().build();
             RateLimiter limiter = RateLimiter.builder(c.rule()).store(store).build()) {
            List<Future<Long>> results = new ArrayList<>();
            for (int t = 0; t < 16; t++) {
                results.add(pool.submit(() -> {
                    long admitted = 0;
                    for (int i = 0; i < c.bound(); i++) {
                        admitted += limiter.tryAcquire(FleetCase.KEY).allowed() ? 1 : 0;
                    }
                    return admitted;
                }));
            }
            long total = 0;
            for (Future<Long> f : results) {
                total += f.get();
            }
            long span = (System.currentTimeMillis() - start) * 1000;
            assertThat(c.replenishedWithin(span)).isZero();
            assertThat(total).isEqualTo(c.expected(span));
        } finally {
            pool.shutdownNow();
        }
    }
}
