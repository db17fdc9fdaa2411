package io.sluice.redis.ports;

import io.sluice.redis.Topology;
import io.sluice.redis.RedisStore;
import static io.sluice.redis.ports.RedisTwin.assertDecision;
import static io.sluice.redis.ports.RedisTwin.TODAY;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Concurrency;
import io.sluice.Decision;
import io.sluice.Limit;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.internal.algorithm.Arith;
import io.sluice.testkit.redis.SharedRedis;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The concurrency port at its edges, on standalone and on the cluster, each call checked against the
 * in-memory store too ({@link RedisTwin}); and many threads on two stores sharing one key.
 */
@ExtendWith(SharedRedis.class)
class ConcurrencyRedisIT {

    private static final long SEC = 1_000_000;
    private static final long LONGEST = Arith.micros(Limit.MAX_DURATION);

    private static RedisTwin twin(Topology topology, long start, Limit... limits) {
        return new RedisTwin(topology, start, Rule.of("conc", limits));
    }

    /** The essay's timeline, from the epoch: the first lease id is 0. */
    @ParameterizedTest
    @EnumSource(Topology.class)
    void essayTimelineFromTheEpoch(Topology topology) {
        try (RedisTwin w = twin(topology, 0, Concurrency.of(2, Duration.ofSeconds(30)))) {
            Decision a = w.tryAcquire("k", 1);
            assertDecision(a, true, 1, 0, 30 * SEC);
            Decision b = w.tryAcquire("k", 1);
            assertThat(List.of(a.lease(), b.lease())).containsExactly(0L, 1L);
            w.clock.setMicros(5 * SEC);
            assertDecision(w.tryAcquire("k", 1), false, 0, 25 * SEC, 25 * SEC);
            w.clock.setMicros(6 * SEC);
            assertThat(w.release("k", 0)).isTrue();
            assertThat(w.release("k", 0)).as("released already").isFalse();
            assertThat(w.release("other", 1)).as("another key's lease").isFalse();
            w.clock.setMicros(7 * SEC);
            Decision c = w.tryAcquire("k", 1);
            assertDecision(c, true, 0, 0, 30 * SEC);
            assertThat(c.lease()).isEqualTo(7 * SEC);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void bestEffortTakesOneLeaseForWhatIsLeft(Topology topology) {
        try (RedisTwin w = twin(topology, TODAY, Concurrency.of(5, Duration.ofSeconds(10)))) {
            w.tryAcquire("k", 2);
            Decision rest = w.tryAcquireAtMost("k", Limit.MAX_COUNT);
            assertThat(rest.granted()).isEqualTo(3);
            assertDecision(w.tryAcquireAtMost("k", 1), false, 0, 10 * SEC, 10 * SEC);
            assertThat(w.release("k", rest.lease())).isTrue();
            assertThat(w.peek("k", 0).remaining()).isEqualTo(3);
        }
    }

    /** Ids run ahead of the clock within one microsecond; they stay unique after the state is dropped. */
    @ParameterizedTest
    @EnumSource(Topology.class)
    void leaseIdsStayUniqueAcrossGrantReleaseCyclesInOneMicrosecond(Topology topology) {
        try (RedisTwin w = twin(topology, TODAY, Concurrency.of(1, Duration.ofNanos(10_000)))) {
            List<Long> ids = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                long lease = w.tryAcquire("k", 1).lease();
                ids.add(lease);
                assertThat(w.release("k", lease)).isTrue();
            }
            assertThat(ids).containsExactly(TODAY, TODAY + 1, TODAY + 2, TODAY + 3, TODAY + 4);
            assertThat(w.exists("k", "concurrency")).as("kept until the clock passes the last id").isTrue();
            w.clock.advanceMicros(2);
            assertThat(w.tryAcquire("k", 1).lease()).isEqualTo(TODAY + 5);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void aLowerMaximumKeepsTheLeasesAndANewTtlAppliesToNewLeases(Topology topology) {
        Concurrency limit = Concurrency.of(3, Duration.ofSeconds(10));
        try (RedisTwin w = twin(topology, TODAY, limit)) {
            long first = w.tryAcquire("k", 2).lease();
            w.updateLimit(limit.withMaxConcurrent(1));
            assertDecision(w.tryAcquire("k", 1), false, 0, 10 * SEC, 10 * SEC);
            w.updateLimit(limit.withLeaseTtl(Duration.ofSeconds(60)));
            assertDecision(w.tryAcquire("k", 1), true, 0, 0, 60 * SEC);
            w.clock.advanceMicros(10 * SEC);
            assertThat(w.release("k", first)).as("expired at 10 s").isFalse();
            assertDecision(w.peek("k", 0), true, 2, 0, 50 * SEC);
        }
    }

    /** Leases near MAX_TIME expire past 2^53, where doubles hold only even integers, and ids stay below it. */
    @ParameterizedTest
    @EnumSource(Topology.class)
    void nearTheEndOfTimeLeasesExpireExactlyAndIdsRunOut(Topology topology) {
        try (RedisTwin w = twin(topology, Arith.MAX_TIME - 10, Concurrency.of(3, Limit.MAX_DURATION))) {
            Decision a = w.tryAcquire("k", 1);
            assertDecision(a, true, 2, 0, LONGEST);
            w.clock.setMicros(Arith.MAX_TIME - 1);
            Decision b = w.tryAcquire("k", 1);
            assertDecision(b, true, 1, 0, LONGEST);
            assertThat(List.of(a.lease(), b.lease())).containsExactly(Arith.MAX_TIME - 10, Arith.MAX_TIME - 1);
            // The next id would be 2^53: none is left, whatever the capacity.
            assertDecision(w.tryAcquire("k", 1), false, 0, Arith.NEVER, LONGEST);
            assertThat(w.tryAcquireAtMost("k", 3).granted()).isZero();
            assertThat(w.release("k", a.lease())).isTrue();
            w.clock.setMicros(Arith.MAX_TIME);
            assertDecision(w.peek("k", 0), true, 0, 0, LONGEST - 1);
            assertThat(w.release("k", Arith.MAX_TIME + 1)).as("not the lease 2^53 - 1, nor any").isFalse();
            assertThat(w.release("k", b.lease())).isTrue();
            assertThat(w.exists("k", "concurrency")).as("no lease, and the clock has passed the last id").isFalse();
        }
    }

    /** A lease that expires at 2^53 + 1, which a plain double sum rounds to 2^53. */
    @ParameterizedTest
    @EnumSource(Topology.class)
    void aLeaseExpiringOneMicrosecondPastTheEndOfTimeStillCountsAtIt(Topology topology) {
        try (RedisTwin w = twin(topology, Arith.MAX_TIME - 2, Concurrency.of(2, Duration.ofNanos(3_000)))) {
            w.tryAcquire("k", 1);
            w.clock.setMicros(Arith.MAX_TIME);
            // No id is left at MAX_TIME (remaining 0 either way); the reset shows the lease still counts.
            assertDecision(w.peek("k", 0), true, 0, 0, 1);
            w.clock.setMicros(Arith.MAX_TIME - 1);
            assertDecision(w.peek("k", 0), true, 1, 0, 2);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void theKeyLivesNoLongerThanItsLastLease(Topology topology) {
        try (RedisTwin w = twin(topology, TODAY, Concurrency.of(2, Duration.ofSeconds(30)))) {
            assertDecision(w.peek("k", 0), true, 2, 0, 0);
            assertThat(w.exists("k", "concurrency")).isFalse();
            long lease = w.tryAcquire("k", 1).lease();
            assertThat(w.pttl("k", "concurrency")).isBetween(30_000L, 31_000L);
            w.clock.advanceMicros(10 * SEC);
            w.tryAcquire("k", 1);
            assertThat(w.pttl("k", "concurrency")).isBetween(30_000L, 31_000L);
            assertThat(w.release("k", lease)).isTrue();
            w.clock.advanceMicros(30 * SEC);
            // Expired by the client's clock: no lease counts, whatever is left in Redis.
            assertDecision(w.peek("k", 0), true, 2, 0, 0);
        }
    }

    /**
     * Two stores (two processes) and 16 threads acquiring and releasing, on Redis server time: never more than
     * the maximum in flight, and every lease id new.
     */
    @ParameterizedTest
    @EnumSource(Topology.class)
    void manyThreadsOnTwoStoresNeverHoldMoreThanTheMaximum(Topology topology) throws Exception {
        String prefix = "cc-" + UUID.randomUUID().toString().substring(0, 8);
        Rule rule = Rule.of("hot", Concurrency.of(5, Duration.ofHours(1)));
        try (RedisStore a = topology.builder().prefix(prefix).build();
             RedisStore b = topology.builder().prefix(prefix).build();
             RateLimiter la = RateLimiter.builder(rule).store(a).build();
             RateLimiter lb = RateLimiter.builder(rule).store(b).build()) {
            Set<Long> ids = ConcurrentHashMap.newKeySet();
            AtomicInteger held = new AtomicInteger();
            AtomicInteger most = new AtomicInteger();
            ExecutorService pool = Executors.newFixedThreadPool(16);
            try {
                List<Future<Integer>> results = new ArrayList<>();
                for (int t = 0; t < 16; t++) {
                    RateLimiter l = t % 2 == 0 ? la : lb;
                    results.add(pool.submit(() -> {
                        int granted = 0;
                        for (int i = 0; i < 40; i++) {
                            Decision d = l.tryAcquire("k");
                            if (d.allowed()) {
                                granted++;
                                assertThat(ids.add(d.lease())).as("lease %d is new", d.lease()).isTrue();
                                most.accumulateAndGet(held.incrementAndGet(), Math::max);
                                held.decrementAndGet();
                                assertThat(l.release("k", d.lease())).isTrue();
                            }
                        }
                        return granted;
                    }));
                }
                int granted = 0;
                for (Future<Integer> f : results) {
                    granted += f.get(60, TimeUnit.SECONDS);
                }
                assertThat(granted).isPositive().isEqualTo(ids.size());
                assertThat(most.get()).isLessThanOrEqualTo(5);
                assertThat(la.peek("k", 0).remaining()).isEqualTo(5);
            } finally {
                pool.shutdownNow();
            }
        }
    }
}
