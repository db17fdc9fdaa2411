package io.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.testkit.redis.RedisCluster;
import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.SharedRedis;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link RedisStore} on a Lettuce client or client resources the application created: decisions go through
 * them, the store leaves them running when closed, and its own timeout still bounds its commands.
 */
@ExtendWith(SharedRedis.class)
class ExistingClientIT {

    private static final Rule RULE = Rule.of("existing", FixedWindow.of(3, Duration.ofMinutes(1)));

    @Test
    void standaloneClientIsUsedAndLeftOpen(RedisServer redis) {
        redis.flushAll();
        RedisClient client = RedisClient.create(redis.uri());
        try {
            try (RedisStore store = RedisStore.builder().client(client).build();
                 RateLimiter limiter = RateLimiter.builder(RULE).store(store).build()) {
                assertThat(limiter.tryAcquire("k").remaining()).isEqualTo(2);
                assertThat(store.toString()).contains("application's RedisClient");
            }
            // The store is closed; the application's client still connects and sees the store's state.
            try (StatefulRedisConnection<String, String> c = client.connect()) {
                assertThat(c.sync().exists("sluice:{existing:k}:fixed_window")).isEqualTo(1);
            }
        } finally {
            client.shutdown();
        }
    }

    @Test
    void clientWithoutUriTakesTheStoresUri(RedisServer redis) {
        redis.flushAll();
        RedisClient client = RedisClient.create();
        try {
            assertThatThrownBy(() -> RedisStore.builder().client(client).build())
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("uri(...)");
            try (RedisStore store = RedisStore.builder().client(client).uri(redis.uri()).build();
                 RateLimiter limiter = RateLimiter.builder(RULE).store(store).build()) {
                limiter.tryAcquire("k");
                assertThat(limiter.tryAcquire("k").remaining()).isEqualTo(1);
            }
        } finally {
            client.shutdown();
        }
    }

    @Test
    void clientResourcesAreSharedNotShutDown(RedisServer redis) {
        redis.flushAll();
        ClientResources resources = DefaultClientResources.create();
        try {
            try (RedisStore store = RedisStore.builder().clientResources(resources).uri(redis.uri()).build();
                 RateLimiter limiter = RateLimiter.builder(RULE).store(store).build()) {
                assertThat(limiter.tryAcquire("k").allowed()).isTrue();
            }
            assertThat(resources.eventExecutorGroup().isShuttingDown()).isFalse();
            RedisClient client = RedisClient.create(resources, redis.uri());
            try (StatefulRedisConnection<String, String> c = client.connect()) {
                assertThat(c.sync().ping()).isEqualTo("PONG");
            } finally {
                client.shutdown();
            }
        } finally {
            resources.shutdown(0, 2, TimeUnit.SECONDS);
        }
    }

    @Test
    void clusterClientIsUsedAndLeftOpen(RedisCluster cluster) {
        cluster.flushAll();
        List<RedisURI> seeds = cluster.seedUris().stream().map(RedisURI::create).collect(Collectors.toList());
        RedisClusterClient client = RedisClusterClient.create(seeds);
        try {
            assertThatThrownBy(() -> RedisStore.builder().client(client).uri(cluster.uri()).build())
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("own seeds");
            try (RedisStore store = RedisStore.builder().client(client).build();
                 RateLimiter limiter = RateLimiter.builder(RULE).store(store).build()) {
                for (int i = 0; i < 3; i++) {
                    assertThat(limiter.tryAcquire("k" + i % 2).allowed()).isTrue();
                }
                assertThat(limiter.tryAcquire("k0").remaining()).isZero();
                assertThat(limiter.tryAcquire("k0").allowed()).isFalse();
            }
            try (var c = client.connect()) {
                assertThat(c.sync().exists("sluice:{existing:k0}:fixed_window")).isEqualTo(1);
            }
        } finally {
            client.shutdown();
        }
    }

    /**
     * The application's client does not time commands out at all; the store's 200 ms timeout must still end its
     * own call on a frozen server, or an outage would block callers for as long as the client's timeout allows.
     */
    @Test
    void storeTimeoutBoundsCommandsOnAClientWithoutOne() throws Exception {
        try (RedisServer redis = RedisServer.start()) {
            RedisClient client = RedisClient.create(redis.uri());
            client.setOptions(ClientOptions.builder().timeoutOptions(TimeoutOptions.builder()
                    .timeoutCommands(false).build()).build());
            try (RedisStore store = RedisStore.builder().client(client).timeout(Duration.ofMillis(200)).build();
                 RateLimiter limiter = RateLimiter.builder(RULE).store(store).build()) {
                redis.pause();
                try {
                    CompletableFuture<Decision> call = limiter.tryAcquireAsync("k", 1);
                    // Far beyond the store's timeout, far below Lettuce's default 60 s: only the store's own
                    // deadline can have completed it.
                    assertThatThrownBy(() -> call.get(10, TimeUnit.SECONDS))
                            .isInstanceOf(ExecutionException.class)
                            .hasRootCauseInstanceOf(io.lettuce.core.RedisCommandTimeoutException.class);
                } finally {
                    redis.resume();
                }
            } finally {
                client.shutdown();
            }
        }
    }
}
