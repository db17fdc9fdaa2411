package io.sluice.redis.modes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.Store.Target;
import io.sluice.redis.RedisStore;
import io.sluice.redis.Topology;
import io.sluice.redis.internal.KeyLayout;
import io.sluice.testkit.ManualClock;
import io.sluice.testkit.redis.SharedRedis;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link RedisStore#decideTogether} on Cluster: keys in different slots are refused with an error that says what
 * to do, and decided apart only through the opt-in {@link RedisStore#decideTogetherAcrossSlots}. (The contract
 * suite covers the atomic case on every topology.)
 */
@ExtendWith(SharedRedis.class)
class TogetherIT {

    private static final Rule PER_USER = Rule.of("per_user", FixedWindow.of(3, Duration.ofMinutes(1)));
    private static final Rule PER_TENANT = Rule.of("per_tenant", FixedWindow.of(4, Duration.ofMinutes(1)));

    private final String prefix = "together-" + UUID.randomUUID().toString().substring(0, 8);
    private final ManualClock clock = new ManualClock();

    private RedisStore store(Topology topology) {
        return topology.builder().prefix(prefix).clock(clock).build();
    }

    @Test
    void onClusterKeysInDifferentSlotsAreRefusedAndNothingIsCharged() {
        Topology cluster = Topology.CLUSTER;
        try (RedisStore store = store(cluster)) {
            assertThat(KeyLayout.slot(prefix + ":{per_user:alice}:fixed_window"))
                    .isNotEqualTo(KeyLayout.slot(prefix + ":{per_tenant:bob}:fixed_window"));
            List<Target> targets = List.of(new Target(PER_USER, "alice"), new Target(PER_TENANT, "bob"));
            assertThatThrownBy(() -> store.decideTogether(targets, Request.tryAcquire(1)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("different Redis Cluster slots")
                    .hasMessageContaining("per_user/'alice'")
                    .hasMessageContaining("{tag}")
                    .hasMessageContaining("decideTogetherAcrossSlots");
            assertThat(cluster.state(prefix + ":{per_user:alice}:fixed_window")).isNull();
            assertThat(cluster.state(prefix + ":{per_tenant:bob}:fixed_window")).isNull();
        }
    }

    @Test
    void onClusterTheOptInDecidesEachTargetApart() {
        Topology cluster = Topology.CLUSTER;
        try (RedisStore store = store(cluster)) {
            store.decide(PER_TENANT, "bob", Request.tryAcquire(4));
            List<Target> targets = List.of(new Target(PER_USER, "alice"), new Target(PER_TENANT, "bob"));
            Decision d = store.decideTogetherAcrossSlots(targets, Request.tryAcquire(2));
            assertThat(d.allowed()).isFalse();
            // Documented: not atomic across slots, alice's own decision admitted and stays charged.
            assertThat(cluster.state(prefix + ":{per_user:alice}:fixed_window").count()).isEqualTo(2);
        }
    }

    @Test
    void onClusterKeysSharingATagAreDecidedTogether() {
        Topology cluster = Topology.CLUSTER;
        try (RedisStore store = store(cluster)) {
            store.decide(PER_TENANT, "{acme}bob", Request.tryAcquire(4));
            List<Target> targets = List.of(new Target(PER_USER, "{acme}alice"), new Target(PER_TENANT, "{acme}bob"));
            Decision d = store.decideTogether(targets, Request.tryAcquire(2));
            assertThat(d.allowed()).isFalse();
            assertThat(cluster.state(prefix + ":per_user:{acme}alice:fixed_window")).isNull();
        }
    }

    @Test
    void onStandaloneAnyKeysAreDecidedTogether() {
        Topology topology = Topology.STANDALONE;
        try (RedisStore store = store(topology)) {
            store.decide(PER_TENANT, "bob", Request.tryAcquire(4));
            Decision d = store.decideTogether(List.of(new Target(PER_USER, "alice"), new Target(PER_TENANT, "bob")),
                    Request.tryAcquire(2));
            assertThat(d.allowed()).isFalse();
            assertThat(topology.state(prefix + ":{per_user:alice}:fixed_window")).isNull();
        }
    }
}
