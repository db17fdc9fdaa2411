package io.sluice.redis.ports;

import io.sluice.redis.Topology;
import io.sluice.redis.RedisStore;
import io.sluice.redis.RedisStoreException;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.redis.internal.KeyLayout;
import io.sluice.redis.internal.LimitParams;
import io.sluice.testkit.ManualClock;
import io.sluice.testkit.redis.SharedRedis;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The pilot port, fixed_window, through the whole stack on standalone and on the 3-master cluster. */
@ExtendWith(SharedRedis.class)
class FixedWindowRedisIT {

    private static final long MS = 1_000;

    private final String prefix = "fw-" + UUID.randomUUID().toString().substring(0, 8);
    private final ManualClock clock = new ManualClock();

    private RedisStore store(Topology topology) {
        return topology.builder().prefix(prefix).clock(clock).build();
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void timelineOfAnEpochAlignedWindow(Topology topology) {
        try (RedisStore store = store(topology);
             RateLimiter l = RateLimiter.builder(Rule.of("api", FixedWindow.of(3, Duration.ofSeconds(1))))
                     .store(store).build()) {
            assertThat(l.tryAcquire("k").remaining()).isEqualTo(2);
            assertThat(l.tryAcquire("k", 2).remaining()).isZero();
            clock.advanceMillis(250);
            Decision rejected = l.tryAcquire("k");
            assertThat(rejected.allowed()).isFalse();
            assertThat(rejected.retryAfterMicros()).isEqualTo(750 * MS);
            assertThat(rejected.resetAfterMicros()).isEqualTo(750 * MS);
            assertThat(rejected.limit()).isEqualTo("fixed_window");
            assertThat(topology.state(prefix + ":{api:k}:fixed_window").count()).isEqualTo(3);
            clock.advanceMillis(750);
            Decision next = l.tryAcquire("k");
            assertThat(next.allowed()).isTrue();
            assertThat(next.resetAfterMicros()).isEqualTo(1000 * MS);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void countRejectedKeepsAHammeringClientOut(Topology topology) {
        FixedWindow limit = FixedWindow.of(2, Duration.ofSeconds(10)).withCountRejected(true);
        try (RedisStore store = store(topology);
             RateLimiter l = RateLimiter.builder(Rule.of("hammer", limit)).store(store).build()) {
            l.tryAcquire("k", 2);
            assertThat(l.tryAcquire("k").allowed()).isFalse();
            assertThat(l.tryAcquire("k").allowed()).isFalse();
            assertThat(topology.state(prefix + ":{hammer:k}:fixed_window").count()).isEqualTo(4);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void firstRequestAlignmentOpensTheWindowAtTheFirstRequest(Topology topology) {
        FixedWindow limit = FixedWindow.of(1, Duration.ofSeconds(10)).withAlign(FixedWindow.Align.FIRST_REQUEST);
        clock.advanceMillis(3_700);
        try (RedisStore store = store(topology);
             RateLimiter l = RateLimiter.builder(Rule.of("first", limit)).store(store).build()) {
            assertThat(l.tryAcquire("k").resetAfterMicros()).isEqualTo(10_000 * MS);
            clock.advanceMillis(9_999);
            assertThat(l.tryAcquire("k").retryAfterMicros()).isEqualTo(1 * MS);
            clock.advanceMillis(1);
            assertThat(l.tryAcquire("k").allowed()).isTrue();
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void aRejectingLimitChargesNoOtherLimit(Topology topology) {
        Rule rule = Rule.of("two", FixedWindow.of(10, Duration.ofMinutes(1)).named("per_minute"),
                FixedWindow.of(2, Duration.ofSeconds(1)).named("per_second"));
        try (RedisStore store = store(topology); RateLimiter l = RateLimiter.builder(rule).store(store).build()) {
            assertThat(l.tryAcquire("k", 2).limit()).isEqualTo("per_second");
            Decision d = l.tryAcquire("k");
            assertThat(d.allowed()).isFalse();
            assertThat(d.limit()).isEqualTo("per_second");
            assertThat(d.remaining()).isZero();
            assertThat(topology.state(prefix + ":{two:k}:per_minute").count()).isEqualTo(2);
            assertThat(l.tryAcquireAtMost("k", 5).granted()).isZero();
            clock.advanceMillis(1000);
            Decision partial = l.tryAcquireAtMost("k", 5);
            assertThat(partial.granted()).isEqualTo(2);
            assertThat(l.peek("k", 0).remaining()).isZero();
            assertThat(topology.state(prefix + ":{two:k}:per_minute").count()).isEqualTo(4);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void updatingTheLimitMigratesTheStateAsTheAlgorithmSays(Topology topology) {
        try (RedisStore store = store(topology);
             RateLimiter l = RateLimiter.builder(Rule.of("mig", FixedWindow.of(2, Duration.ofMinutes(1))))
                     .store(store).build()) {
            assertThat(l.tryAcquire("k", 2).allowed()).isTrue();
            l.updateLimit(FixedWindow.of(3, Duration.ofMinutes(1)));
            assertThat(l.tryAcquire("k").remaining()).isZero();
            assertThat(topology.state(prefix + ":{mig:k}:fixed_window").fingerprint())
                    .isEqualTo(LimitParams.fingerprint("fixed_window", "3 60000000 epoch 0"));
            l.updateLimit(FixedWindow.of(3, Duration.ofMinutes(2)));
            assertThat(l.tryAcquire("k").remaining()).as("a new window length restarts the count").isEqualTo(2);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void stateWrittenUnderAnotherAlgorithmOrLayoutIsDroppedNotMisread(Topology topology) {
        String key = prefix + ":{alien:k}:fixed_window";
        String current = LimitParams.fingerprint("fixed_window", "3 60000000 epoch 0");
        // windowStart 1767225600000000 ("hefg8dts00"), count 99 ("2r"): misread, it would reject.
        String window = Long.toString(clock.nowMicros() - clock.nowMicros() % 60_000_000L, 36);
        try (RedisStore store = store(topology);
             RateLimiter l = RateLimiter.builder(Rule.of("alien", FixedWindow.of(3, Duration.ofMinutes(1))))
                     .store(store).build()) {
            topology.call(key, "SET", key, LimitParams.fingerprint("token_bucket", "5 1 1000000 greedy 5") + "|"
                    + window + "|2r", "PX", "60000");
            assertThat(l.tryAcquire("k").remaining()).as("another algorithm's fingerprint").isEqualTo(2);
            assertThat(topology.state(key).fingerprint()).isEqualTo(current);
            topology.call(key, "SET", key, current + "|2r", "PX", "60000");
            assertThat(l.tryAcquire("k").remaining()).as("a state of another shape").isEqualTo(2);
            topology.call(key, "DEL", key);
            topology.call(key, "HSET", key, "_p", "fixed_window 3 60000000 epoch 0", "windowStart", window, "count",
                    "99");
            topology.call(key, "PEXPIRE", key, "60000");
            assertThat(l.tryAcquire("k").remaining()).as("a hash of the layout of earlier versions").isEqualTo(2);
            assertThat(topology.state(key).count()).isEqualTo(1);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void aCorruptStateIsAScriptErrorNamingTheFileAndLine(Topology topology) {
        String key = prefix + ":{corrupt:k}:fixed_window";
        topology.call(key, "SET", key, LimitParams.fingerprint("fixed_window", "3 60000000 epoch 0") + "|0|x!");
        try (RedisStore store = store(topology);
             RateLimiter l = RateLimiter.builder(Rule.of("corrupt", FixedWindow.of(3, Duration.ofMinutes(1))))
                     .store(store).build()) {
            assertThatThrownBy(() -> l.tryAcquire("k")).isInstanceOf(RedisStoreException.class)
                    .hasMessageContaining("failed the Sluice script")
                    .hasMessageContaining("expected a base-36 integer, got 'x!'")
                    .hasMessageMatching("(?s).*user_(script|function):\\d+ \\(lib/state_decode\\.lua:\\d+\\).*");
        } finally {
            topology.call(key, "DEL", key);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void serverTimeModeDecidesWithoutAClientClock(Topology topology) {
        try (RedisStore store = topology.builder().prefix(prefix).build();
             RateLimiter l = RateLimiter.builder(Rule.of("srv", FixedWindow.of(2, Duration.ofHours(1))))
                     .store(store).build()) {
            Decision first = l.tryAcquire("k");
            assertThat(first.remaining()).isEqualTo(1);
            assertThat(first.resetAfterMicros()).isPositive().isLessThanOrEqualTo(3_600_000_000L);
            l.tryAcquire("k");
            assertThat(l.tryAcquire("k").allowed()).isFalse();
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void manyThreadsOnTwoStoresAdmitExactlyTheLimit(Topology topology) throws Exception {
        Rule rule = Rule.of("hot", FixedWindow.of(1000, Duration.ofHours(1)).named("hourly"),
                FixedWindow.of(1500, Duration.ofDays(1)).named("daily"));
        // Two stores are two connections, as two processes sharing the limit would have.
        try (RedisStore a = store(topology); RedisStore b = store(topology);
             RateLimiter la = RateLimiter.builder(rule).store(a).build();
             RateLimiter lb = RateLimiter.builder(rule).store(b).build()) {
            ExecutorService pool = Executors.newFixedThreadPool(16);
            try {
                List<Future<Integer>> results = new ArrayList<>();
                for (int t = 0; t < 16; t++) {
                    RateLimiter l = t % 2 == 0 ? la : lb;
                    results.add(pool.submit(() -> {
                        int admitted = 0;
                        for (int i = 0; i < 150; i++) {
                            admitted += l.tryAcquire("hot").allowed() ? 1 : 0;
                        }
                        return admitted;
                    }));
                }
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

    @Test
    void keysSpreadOverEverySlotOwnerOfTheCluster() {
        Topology cluster = Topology.CLUSTER;
        try (RedisStore store = store(cluster);
             RateLimiter l = RateLimiter.builder(Rule.of("spread", FixedWindow.of(2, Duration.ofMinutes(1))))
                     .store(store).build()) {
            Set<Integer> slots = new HashSet<>();
            for (int i = 0; i < 200; i++) {
                String key = "user:" + i;
                assertThat(l.tryAcquire(key).remaining()).isEqualTo(1);
                assertThat(l.tryAcquire(key).remaining()).isZero();
                assertThat(l.tryAcquire(key).allowed()).isFalse();
                slots.add(KeyLayout.slot(prefix + ":{spread:" + key + "}:fixed_window"));
            }
            assertThat(slots.size()).isGreaterThan(150);
            // State keys only: the request keys (":r:") live for twice the timeout beside them.
            List<List<String>> perNode = cluster.keysPerNode(prefix + ":{spread:*}:fixed_window");
            assertThat(perNode).hasSize(3).allSatisfy(keys -> assertThat(keys).hasSizeGreaterThan(30));
            assertThat(perNode.stream().mapToInt(List::size).sum()).isEqualTo(200);
        }
    }
}
