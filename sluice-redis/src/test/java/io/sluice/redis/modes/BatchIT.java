package io.sluice.redis.modes;

import io.sluice.redis.Topology;
import io.sluice.redis.TcpProxy;
import io.sluice.redis.RedisStore;
import io.sluice.redis.BatchRequest;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.redis.BatchRequest.Target;
import io.sluice.redis.internal.KeyLayout;
import io.sluice.testkit.ManualClock;
import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.SharedRedis;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** {@link RedisStore#decideAll}: many decisions in one flush, in order; multi-key requests. */
@ExtendWith(SharedRedis.class)
class BatchIT {

    private static final Rule PER_KEY = Rule.of("batch", FixedWindow.of(5, Duration.ofMinutes(1)));
    private static final Rule PER_USER = Rule.of("per_user", FixedWindow.of(3, Duration.ofMinutes(1)));
    private static final Rule PER_TENANT = Rule.of("per_tenant", FixedWindow.of(4, Duration.ofMinutes(1)));

    private final String prefix = "batch-" + UUID.randomUUID().toString().substring(0, 8);
    private final ManualClock clock = new ManualClock();

    private RedisStore store(Topology topology) {
        return topology.builder().prefix(prefix).clock(clock).build();
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void decisionsComeBackInRequestOrder(Topology topology) {
        try (RedisStore store = store(topology)) {
            List<BatchRequest> requests = new ArrayList<>();
            for (int i = 0; i < 300; i++) {
                requests.add(BatchRequest.of(PER_KEY, "user:" + (i % 30), Request.tryAcquire(1)));
            }
            List<Decision> decisions = store.decideAll(requests);
            assertThat(decisions).hasSize(300);
            for (int i = 0; i < 300; i++) {
                int nth = i / 30; // how many earlier requests this key had
                assertThat(decisions.get(i).allowed()).as("request %d", i).isEqualTo(nth < 5);
                assertThat(decisions.get(i).remaining()).as("request %d", i).isEqualTo(Math.max(0, 4 - nth));
            }
            assertThat(store.decideAll(List.of())).isEmpty();
        }
    }

    @Test
    void theBatchIsWrittenInOneFlush() throws Exception {
        try (TcpProxy proxy = new TcpProxy(RedisServer.shared().port());
             RedisStore store = RedisStore.builder().uri(proxy.uri()).prefix(prefix).clock(clock).build()) {
            store.decideAll(List.of(BatchRequest.of(PER_KEY, "warmup", Request.tryAcquire(1))));
            List<BatchRequest> requests = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                requests.add(BatchRequest.of(PER_KEY, "flush:" + i, Request.tryAcquire(1)));
            }
            proxy.resetCounters();
            assertThat(store.decideAll(requests)).allMatch(Decision::allowed);
            // 200 EVALSHA commands, one write: the proxy reads them in a few socket-buffer-sized chunks.
            assertThat(proxy.forwardedChunks()).isLessThanOrEqualTo(10);

            proxy.resetCounters();
            for (int i = 0; i < 20; i++) {
                store.decide(PER_KEY, "single:" + i, Request.tryAcquire(1));
            }
            assertThat(proxy.forwardedChunks()).as("one write per synchronous call").isEqualTo(20);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void keysSharingATagAreDecidedAllOrNothingInOneScript(Topology topology) {
        try (RedisStore store = store(topology)) {
            Target user = new Target(PER_USER, "{acme}:user:7");
            Target tenant = new Target(PER_TENANT, "{acme}");
            assertThat(KeyLayout.slot(prefix + ":per_user:{acme}:user:7:fixed_window"))
                    .isEqualTo(KeyLayout.slot(prefix + ":per_tenant:{acme}:fixed_window"));
            Decision first = store.decideAll(List.of(BatchRequest.allOf(Request.tryAcquire(3), user, tenant))).get(0);
            assertThat(first.allowed()).isTrue();
            assertThat(first.remaining()).isEqualTo(0);
            assertThat(first.limit()).isEqualTo("fixed_window");
            // The tenant has 1 left, the user none: rejected, and the tenant is not charged.
            Decision second = store.decideAll(List.of(BatchRequest.allOf(Request.tryAcquire(1), user, tenant))).get(0);
            assertThat(second.allowed()).isFalse();
            assertThat(topology.state(prefix + ":per_tenant:{acme}:fixed_window").count()).isEqualTo(3);
            Decision partial = store.decideAll(List.of(BatchRequest.allOf(Request.tryAcquireAtMost(5),
                    new Target(PER_USER, "{acme}:user:8"), tenant))).get(0);
            assertThat(partial.granted()).isEqualTo(1);
        }
    }

    @Test
    void onClusterTargetsInDifferentSlotsAreEachAtomicButNotTogether() {
        Topology cluster = Topology.CLUSTER;
        try (RedisStore store = store(cluster)) {
            Target a = new Target(PER_USER, "alice");
            Target b = new Target(PER_TENANT, "bob");
            assertThat(KeyLayout.slot(prefix + ":{per_user:alice}:fixed_window"))
                    .isNotEqualTo(KeyLayout.slot(prefix + ":{per_tenant:bob}:fixed_window"));
            store.decide(PER_TENANT, "bob", Request.tryAcquire(4));
            Decision d = store.decideAll(List.of(BatchRequest.allOf(Request.tryAcquire(2), a, b))).get(0);
            assertThat(d.allowed()).isFalse();
            assertThat(d.retryAfterMicros()).isPositive();
            // Documented: alice's own decision admitted and stays charged.
            assertThat(cluster.state(prefix + ":{per_user:alice}:fixed_window").count()).isEqualTo(2);
        }
    }

    @Test
    void onStandaloneAnyKeysAreDecidedTogether() {
        Topology topology = Topology.STANDALONE;
        try (RedisStore store = store(topology)) {
            store.decide(PER_TENANT, "bob", Request.tryAcquire(4));
            Decision d = store.decideAll(List.of(BatchRequest.allOf(Request.tryAcquire(2),
                    new Target(PER_USER, "alice"), new Target(PER_TENANT, "bob")))).get(0);
            assertThat(d.allowed()).isFalse();
            assertThat(topology.state(prefix + ":{per_user:alice}:fixed_window")).isNull();
        }
    }

    @Test
    void invalidBatchesFailBeforeAnythingIsSent() {
        assertThatThrownBy(() -> BatchRequest.allOf(Request.tryAcquire(1), new Target(PER_USER, "a"),
                new Target(PER_USER, "a"))).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("twice");
        assertThatThrownBy(() -> BatchRequest.of(PER_USER, "a", Request.tryAcquire(4)))
                .hasMessageContaining("permits must be in [1, 3]");
        assertThatThrownBy(() -> BatchRequest.allOf(Request.tryAcquire(1))).hasMessageContaining("at least one");
        assertThatThrownBy(() -> new Target(PER_USER, "")).hasMessageContaining("key");
    }
}
