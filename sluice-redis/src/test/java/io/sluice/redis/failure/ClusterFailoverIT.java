package io.sluice.redis.failure;

import io.sluice.redis.StoredState;
import io.sluice.redis.RedisStore;
import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.cluster.SlotHash;
import io.sluice.Decision;
import io.sluice.FailurePolicy;
import io.sluice.FixedWindow;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.SluiceListener;
import io.sluice.redis.internal.DefaultRedisStore;
import io.sluice.testkit.redis.RedisCluster;
import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.RespConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A Redis Cluster of three masters with one replica each loses the master that holds a key: the rule's policy
 * decides while the cluster fails over, and once the replica is promoted and the client has re-read the
 * topology, Redis decides again with the state the replica had.
 */
class ClusterFailoverIT {

    private static final Duration NODE_TIMEOUT = Duration.ofMillis(1000);
    private static final Duration TIMEOUT = Duration.ofMillis(200);
    private static final Duration COOL_DOWN = Duration.ofMillis(500);
    private static final Duration PROMPT = TIMEOUT.plusSeconds(1);
    private static final Duration FAILOVER = Duration.ofSeconds(30);

    @Test
    void theLimiterFollowsAFailoverAndDecidesByItsPolicyMeanwhile() throws Exception {
        Rule rule = Rule.of("api", FixedWindow.of(1_000_000, Duration.ofDays(1)).named("per_day"))
                .withFailurePolicy(FailurePolicy.localFallback(0.0001));
        AtomicInteger failedCalls = new AtomicInteger();
        SluiceListener listener = new SluiceListener() {
            @Override
            public void onStoreCall(String operation, long nanos, Throwable error) {
                if (error != null) {
                    failedCalls.incrementAndGet();
                }
            }
        };
        try (RedisCluster cluster = RedisCluster.start(3, 1, NODE_TIMEOUT);
             RedisStore store = RedisStore.builder().uri(cluster.uri()).cluster(true).prefix("failover")
                     .timeout(TIMEOUT).circuitBreaker(3, COOL_DOWN).listener(listener).build();
             RateLimiter limiter = RateLimiter.builder(rule).store(store).build()) {
            String stateKey = ((DefaultRedisStore) store).layout().stateKey("api", "k", "per_day");
            int slot = SlotHash.getSlot(stateKey);
            RedisServer master = cluster.masterOf(slot);
            RedisServer replica = replicaOf(cluster, master);

            for (int i = 0; i < 20; i++) {
                assertThat(limiter.tryAcquire("k").source()).isEqualTo(Decision.Source.STORE);
            }
            // Replication is asynchronous: wait until the replica holds all 20, so this test loses nothing.
            long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (countOn(replica, stateKey) != 20) {
                assertThat(System.nanoTime()).as("the replica caught up").isLessThan(until);
                Thread.sleep(10);
            }

            long killed = System.nanoTime();
            master.kill();
            List<Decision> decisions = new ArrayList<>();
            long promoted = 0;
            long storeAgain = 0;
            long slowest = 0;
            long deadline = killed + FAILOVER.toNanos();
            while (storeAgain == 0 && System.nanoTime() < deadline) {
                long start = System.nanoTime();
                Decision d = limiter.tryAcquire("k");
                long end = System.nanoTime();
                slowest = Math.max(slowest, end - start);
                decisions.add(d);
                if (promoted == 0 && cluster.masterOf(slot) == replica) {
                    promoted = end;
                }
                if (d.source() == Decision.Source.STORE) {
                    storeAgain = end;
                }
                Thread.sleep(5);
            }
            assertThat(storeAgain).as("Redis decides again within " + FAILOVER).isPositive();
            assertThat(cluster.masterOf(slot)).as("the replica was promoted").isSameAs(replica);
            assertThat(Duration.ofNanos(slowest)).as("no call waited more than one timeout and a second")
                    .isLessThan(PROMPT);
            List<Decision> meanwhile = decisions.subList(0, decisions.size() - 1);
            assertThat(meanwhile).as("until then, the local fallback decided").isNotEmpty()
                    .allSatisfy(d -> assertThat(d.source()).isEqualTo(Decision.Source.LOCAL_FALLBACK));
            assertThat(meanwhile.stream().filter(Decision::allowed).count()).as("within its share")
                    .isLessThanOrEqualTo(100);

            for (int i = 0; i < 5; i++) {
                assertThat(limiter.tryAcquire("k").source()).isEqualTo(Decision.Source.STORE);
            }
            long storeAdmitted = 20 + 1 + 5;
            long charged = countOn(replica, stateKey);
            assertThat(charged).as("the promoted replica kept the 20 it had, adds what it admitted since, and at "
                    + "most the failed calls that were re-routed to it before they timed out")
                    .isBetween(storeAdmitted, storeAdmitted + failedCalls.get());
            System.out.printf("failover: %d decisions by the fallback; replica promoted %d ms and Redis deciding "
                            + "again %d ms after the kill (node timeout %s); slowest call %d ms; %d failed calls; "
                            + "%d charged for %d admitted%n", meanwhile.size(),
                    promoted == 0 ? -1 : (promoted - killed) / 1_000_000, (storeAgain - killed) / 1_000_000,
                    NODE_TIMEOUT, slowest / 1_000_000, failedCalls.get(), charged, storeAdmitted);
        }
    }

    /** The replica of {@code master}, by its replication info. */
    private static RedisServer replicaOf(RedisCluster cluster, RedisServer master) {
        for (RedisServer node : cluster.nodes()) {
            String info = String.valueOf(node.call("INFO", "replication"));
            if (info.contains("role:slave") && info.contains("master_port:" + master.port() + "\r")) {
                return node;
            }
        }
        throw new AssertionError("no replica of " + master);
    }

    /** The fixed_window count {@code node} holds, read on a replica too (READONLY), 0 when absent. */
    private static long countOn(RedisServer node, String stateKey) {
        try (RespConnection c = RespConnection.open(node.host(), node.port(), Duration.ofSeconds(5))) {
            c.call("READONLY");
            StoredState state = StoredState.parse(c.call("GET", stateKey));
            return state == null ? 0 : state.count();
        }
    }
}
