package io.sluice.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.Decision;
import io.sluice.FailurePolicy;
import io.sluice.FixedWindow;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.Store.Target;
import io.sluice.testkit.redis.RedisCluster;
import io.sluice.testkit.redis.SharedRedis;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code RemoteStore.decideTogether} where the contract suite does not reach: a server on a Redis Cluster
 * (targets in one slot are decided together; targets in different slots are refused with the server's message
 * as an {@link IllegalArgumentException}, charging nothing) and a server that cannot be reached (each target
 * decided by its rule's policy).
 */
@ExtendWith(SharedRedis.class)
class RemoteTogetherIT {

    private static Rule rule(String name, FailurePolicy policy) {
        return Rule.of(name + "-" + UUID.randomUUID(), FixedWindow.of(2, Duration.ofHours(1)))
                .withFailurePolicy(policy);
    }

    @Test
    void onAClusterTargetsInOneSlotAreDecidedTogetherAndOthersRefused(RedisCluster cluster) {
        // A generous Redis timeout: a cluster connection on a loaded machine takes more than the default 500 ms.
        try (ServeProcess server = ServeProcess.start("--store", cluster.uri(), "--redis-timeout", "10s");
             RemoteStore store = RemoteStore.builder().uri(server.uri()).timeout(Duration.ofSeconds(30)).build()) {
            Rule user = rule("user", FailurePolicy.raise());
            Rule tenant = rule("tenant", FailurePolicy.raise());
            List<Target> tagged = List.of(new Target(user, "{t}u"), new Target(tenant, "{t}all"));
            assertThat(store.decideTogether(tagged, Request.tryAcquire(2)).allowed()).isTrue();
            Decision rejected = store.decideTogether(List.of(new Target(user, "{t}v"), new Target(tenant, "{t}all")),
                    Request.tryAcquire(1));
            assertThat(rejected.allowed()).isFalse();
            assertThat(store.decide(user, "{t}v", Request.peek(0)).remaining()).as("v was not charged").isEqualTo(2);

            List<Target> apart = List.of(new Target(user, "alice"), new Target(tenant, "bob"));
            assertThatThrownBy(() -> store.decideTogether(apart, Request.tryAcquire(1)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("targets: targets " + user.name() + "/'alice'")
                    .hasMessageContaining("different Redis Cluster slots");
            assertThat(store.decide(user, "alice", Request.peek(0)).remaining()).isEqualTo(2);
            assertThat(store.decide(tenant, "bob", Request.peek(0)).remaining()).isEqualTo(2);
        }
    }

    @Test
    void aServerOutOfReachDecidesEachTargetByItsPolicy() {
        try (RemoteStore store = RemoteStore.builder().uri("http://127.0.0.1:" + closedPort())
                .timeout(Duration.ofSeconds(5)).build()) {
            Rule open = rule("open", FailurePolicy.failOpen());
            Rule closed = rule("closed", FailurePolicy.failClosed());
            Rule raise = rule("raise", FailurePolicy.raise());
            Decision bothOpen = store.decideTogether(List.of(new Target(open, "a"), new Target(open, "b")),
                    Request.tryAcquire(1));
            assertThat(bothOpen.allowed()).isTrue();
            assertThat(bothOpen.source()).isEqualTo(Decision.Source.FAIL_OPEN);
            assertThat(store.decideTogether(List.of(new Target(open, "a"), new Target(closed, "a")),
                    Request.tryAcquire(1)).allowed()).as("fail_closed rejects, so the whole request is").isFalse();
            assertThatThrownBy(() -> store.decideTogether(List.of(new Target(open, "a"), new Target(raise, "a")),
                    Request.tryAcquire(1))).isInstanceOf(RemoteUnavailableException.class);
        }
    }

    /** A loopback port nothing listens on (taken from the kernel, then closed). */
    private static int closedPort() {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
