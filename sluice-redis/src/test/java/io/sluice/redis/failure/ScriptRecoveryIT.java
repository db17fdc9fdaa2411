package io.sluice.redis.failure;

import io.sluice.redis.Topology;
import io.sluice.redis.RedisStore;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.FixedWindow;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.redis.internal.DefaultRedisStore;
import io.sluice.testkit.ManualClock;
import io.sluice.testkit.redis.SharedRedis;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** A server that lost its script cache (restart, failover, SCRIPT FLUSH) gets the script again, transparently. */
@ExtendWith(SharedRedis.class)
class ScriptRecoveryIT {

    private final String prefix = "noscript-" + UUID.randomUUID().toString().substring(0, 8);

    @ParameterizedTest
    @EnumSource(Topology.class)
    void decisionsSurviveAScriptFlushOnEveryNode(Topology topology) throws Exception {
        try (RedisStore store = topology.builder().prefix(prefix).clock(new ManualClock()).build();
             RateLimiter l = RateLimiter.builder(Rule.of("flush", FixedWindow.of(2, Duration.ofMinutes(1))))
                     .store(store).build()) {
            DefaultRedisStore impl = (DefaultRedisStore) store;
            assertThat(l.tryAcquire("k").remaining()).isEqualTo(1);
            long loads = impl.scriptLoads();

            topology.flushScripts();
            assertThat(l.tryAcquire("k").remaining()).as("charged after the reload, once").isZero();
            assertThat(l.tryAcquire("k").allowed()).isFalse();
            assertThat(impl.scriptLoads()).isEqualTo(loads + 1);

            // Concurrent NOSCRIPT failures on keys all over the cluster share one reload.
            topology.flushScripts();
            List<CompletableFuture<?>> calls = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                calls.add(l.tryAcquireAsync("key-" + i, 1));
            }
            for (CompletableFuture<?> c : calls) {
                c.get();
            }
            assertThat(impl.scriptLoads()).isBetween(loads + 2, loads + 4);
            for (int i = 0; i < 50; i++) {
                assertThat(l.peek("key-" + i, 0).remaining()).isEqualTo(1);
            }
        }
    }
}
