package io.sluice.testkit.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.UncheckedIOException;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The test servers themselves: lifecycle controls and a cluster with replicas. */
class RedisServersIT {

    @Test
    void pauseKillAndRestartOnTheSamePort() {
        try (RedisServer server = RedisServer.start()) {
            server.call("SET", "k", "v");
            assertThat(server.call("GET", "k")).isEqualTo("v");
            server.pause();
            server.resume();
            assertThat(server.call("PING")).isEqualTo("PONG");
            int port = server.port();
            server.kill();
            assertThat(server.isRunning()).isFalse();
            assertThatThrownBy(() -> server.call("PING")).isInstanceOf(UncheckedIOException.class);
            server.restart();
            assertThat(server.port()).isEqualTo(port);
            assertThat(server.call("GET", "k")).as("no persistence").isNull();
            assertThat(server.call("CONFIG", "GET", "save")).isEqualTo(List.of("save", ""));
            assertThat(server.call("CONFIG", "GET", "bind")).isEqualTo(List.of("bind", "127.0.0.1"));
        }
    }

    @Test
    void aClusterWithReplicas() {
        try (RedisCluster cluster = RedisCluster.start(3, 1)) {
            assertThat(cluster.nodes()).hasSize(6);
            String nodes = (String) cluster.nodes().get(0).call("CLUSTER", "NODES");
            assertThat(nodes.lines().filter(l -> l.contains("master"))).hasSize(3);
            assertThat(nodes.lines().filter(l -> l.contains("slave"))).hasSize(3);
            for (Object info : cluster.callOnAll("CLUSTER", "INFO")) {
                assertThat((String) info).contains("cluster_state:ok").contains("cluster_slots_ok:16384");
            }
        }
    }
}
