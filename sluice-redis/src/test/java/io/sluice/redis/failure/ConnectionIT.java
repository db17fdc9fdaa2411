package io.sluice.redis.failure;

import io.sluice.redis.StoredState;
import io.sluice.redis.RedisStore;
import io.sluice.redis.RedisStoreException;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.FixedWindow;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.RedisSentinel;
import io.sluice.testkit.redis.SharedRedis;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The URI forms other than plain standalone: ACL credentials, Sentinel. */
@ExtendWith(SharedRedis.class)
class ConnectionIT {

    private static final Rule RULE = Rule.of("conn", FixedWindow.of(2, Duration.ofMinutes(1)));

    @Test
    void aclUserAndPasswordFromTheUri() {
        try (RedisServer server = RedisServer.start()) {
            // The user may touch only the store's keys; wrong credentials must fail the connection.
            server.call("ACL", "SETUSER", "limiter", "on", ">s3cret", "~sluice:*", "+@all");
            String uri = "redis://limiter:s3cret@127.0.0.1:" + server.port();
            try (RedisStore store = RedisStore.builder().uri(uri).build();
                 RateLimiter l = RateLimiter.builder(RULE).store(store).build()) {
                assertThat(l.tryAcquire("k").remaining()).isEqualTo(1);
            }
            assertThat((List<?>) server.call("ACL", "LOG")).as("no denied command").isEmpty();
            assertThatThrownBy(() -> RedisStore.builder().uri("redis://limiter:wrong@127.0.0.1:" + server.port())
                    .timeout(Duration.ofMillis(500)).build())
                    .isInstanceOf(RedisStoreException.class).hasMessageContaining("cannot connect")
                    .hasMessageNotContaining("wrong");
        }
    }

    @Test
    void sentinelFindsTheMaster() {
        try (RedisServer master = RedisServer.start(); RedisSentinel sentinel = RedisSentinel.start(master, "mymaster");
             RedisStore store = RedisStore.builder().uri(sentinel.uri()).build();
             RateLimiter l = RateLimiter.builder(RULE).store(store).build()) {
            assertThat(l.tryAcquire("k").remaining()).isEqualTo(1);
            assertThat(StoredState.parse(master.call("GET", "sluice:{conn:k}:fixed_window")).count()).isEqualTo(1);
        }
    }
}
