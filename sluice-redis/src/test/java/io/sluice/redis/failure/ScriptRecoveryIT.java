package io.sluice.redis.failure;

import io.sluice.redis.Topology;
import io.sluice.redis.RedisStore;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.FixedWindow;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.redis.internal.DefaultRedisStore;
import io.sluice.redis.internal.KeyLayout;
import io.sluice.redis.internal.SluiceScript;
import io.sluice.testkit.redis.RedisCluster;
import io.sluice.testkit.redis.RedisServer;
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

/**
 * A server that lost the functions library or the script (restart without persistence, a new master, FUNCTION FLUSH,
 * SCRIPT FLUSH) gets it again, transparently, and the call that found it missing is charged once.
 */
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
            assertThat(impl.usesFunctions()).as("Redis 7 runs the functions library by default").isTrue();
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

    /**
     * On a cluster the library lives on every master: a master that lost it (as a node added empty, or a replica
     * promoted without it, would lack it) answers "Function not found" for its keys only; the store loads it on
     * every master again and retries that call once, and keys on the other masters never noticed.
     */
    @org.junit.jupiter.api.Test
    void aClusterMasterThatLostTheLibraryGetsItBackAndEveryMasterHasIt() {
        try (RedisStore store = Topology.CLUSTER.builder().prefix(prefix).clock(new ManualClock()).build();
             RateLimiter l = RateLimiter.builder(Rule.of("one", FixedWindow.of(2, Duration.ofMinutes(1))))
                     .store(store).build()) {
            DefaultRedisStore impl = (DefaultRedisStore) store;
            String name = SluiceScript.get().functionName();
            List<RedisServer> masters = RedisCluster.shared().nodes();
            for (RedisServer master : masters) {
                assertThat(libraries(master)).as("loaded on %s at connect", master).contains(name);
            }
            String stateKey = impl.layout().stateKey("one", "k", "fixed_window");
            RedisServer owner = RedisCluster.shared().masterOf(KeyLayout.slot(stateKey));
            assertThat(l.tryAcquire("k").remaining()).isEqualTo(1);
            long loads = impl.scriptLoads();

            owner.call("FUNCTION", "FLUSH");
            assertThat(libraries(owner)).doesNotContain(name);
            assertThat(l.tryAcquire("k").remaining()).as("charged once on the master that lost it").isZero();
            assertThat(l.tryAcquire("k").allowed()).isFalse();
            assertThat(impl.scriptLoads()).isEqualTo(loads + 1);
            for (RedisServer master : masters) {
                assertThat(libraries(master)).as("on %s after the reload", master).contains(name);
            }
        }
    }

    /** The library names loaded on {@code node}. */
    private static List<String> libraries(RedisServer node) {
        List<String> names = new ArrayList<>();
        for (Object library : (List<?>) node.call("FUNCTION", "LIST")) {
            List<?> fields = (List<?>) library;
            for (int i = 0; i + 1 < fields.size(); i += 2) {
                if ("library_name".equals(fields.get(i))) {
                    names.add(String.valueOf(fields.get(i + 1)));
                }
            }
        }
        return names;
    }
}
