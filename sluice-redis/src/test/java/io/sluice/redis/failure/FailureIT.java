package io.sluice.redis.failure;

import io.sluice.redis.RedisStore;
import io.sluice.redis.RedisStoreException;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.Concurrency;
import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.redis.internal.DefaultRedisStore;
import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.SharedRedis;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** When Redis is slow, gone or back, the store says so with a RedisStoreException, never a made-up decision. */
@ExtendWith(SharedRedis.class)
class FailureIT {

    private static final Rule RULE = Rule.of("fail", FixedWindow.of(100, Duration.ofMinutes(1)));
    private static RedisServer server;

    @BeforeAll
    static void startOwnServer() {
        server = RedisServer.start();
    }

    @AfterAll
    static void stopOwnServer() {
        server.close();
    }

    private RedisStore store(Duration timeout) {
        return RedisStore.builder().uri(server.uri()).timeout(timeout).build();
    }

    @Test
    void aPausedServerTimesOutAndTheStoreRecoversWhenItResumes() throws Exception {
        try (RedisStore store = store(Duration.ofMillis(300));
             RateLimiter l = RateLimiter.builder(RULE).store(store).build()) {
            assertThat(l.tryAcquire("k").allowed()).isTrue();
            server.pause();
            try {
                long start = System.nanoTime();
                assertThatThrownBy(() -> l.tryAcquire("k")).isInstanceOf(RedisStoreException.class)
                        .hasMessageContaining("did not answer within PT0.3S")
                        .hasMessageContaining("may or may not have been charged");
                assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(1));
                CompletableFuture<Decision> async = l.tryAcquireAsync("k", 1);
                assertThatThrownBy(() -> async.get(2, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                        .hasCauseInstanceOf(RedisStoreException.class);
            } finally {
                server.resume();
            }
            assertThat(l.tryAcquire("k").allowed()).isTrue();
        }
    }

    @Test
    void aKilledServerIsUnavailableAndARestartedOneGetsTheScriptAgain() {
        // The server runs without persistence: the restarted process has neither the state nor the functions
        // library, so the first call answers "Function not found", loads it and is retried, charged once.
        try (RedisStore store = store(Duration.ofMillis(500));
             RateLimiter l = RateLimiter.builder(RULE).store(store).build()) {
            assertThat(l.tryAcquire("k").remaining()).isEqualTo(99);
            server.kill();
            assertThatThrownBy(() -> l.tryAcquire("k")).isInstanceOf(RedisStoreException.class)
                    .hasMessageContaining("Redis at redis://127.0.0.1:" + server.port());
            server.restart();
            long loads = ((DefaultRedisStore) store).scriptLoads();
            Decision d = awaitAvailable(l);
            assertThat(d.remaining()).as("the restarted server is empty").isEqualTo(99);
            assertThat(((DefaultRedisStore) store).usesFunctions()).isTrue();
            assertThat(((DefaultRedisStore) store).scriptLoads()).as("Function not found on the new process")
                    .isEqualTo(loads + 1);
            assertThat(l.tryAcquire("k").remaining()).as("the retried call was charged once").isEqualTo(98);
        }
    }

    @Test
    void buildingAgainstNothingFailsClearly() throws Exception {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0)) {
            closedPort = s.getLocalPort();
        }
        assertThatThrownBy(() -> RedisStore.builder().uri("redis://127.0.0.1:" + closedPort)
                .timeout(Duration.ofMillis(300)).build())
                .isInstanceOf(RedisStoreException.class)
                .hasMessageContaining("cannot connect to Redis at redis://127.0.0.1:" + closedPort);
    }

    @Test
    void everyAlgorithmHasAScriptAndDecidesThroughRedis() {
        // The "no Redis script yet" path (a rule using an algorithm whose .lua file is missing) cannot be reached
        // now that every algorithm is ported; this guards that it stays so and that a mixed rule runs.
        assertThat(io.sluice.redis.internal.SluiceScript.get().algorithms())
                .containsExactlyInAnyOrderElementsOf(io.sluice.redis.internal.SluiceScript.ALGORITHMS);
        Rule rule = Rule.of("every", FixedWindow.of(5, Duration.ofMinutes(1)),
                Concurrency.of(3, Duration.ofSeconds(1)).named("inflight"));
        try (RedisStore store = store(Duration.ofSeconds(1));
             RateLimiter l = RateLimiter.builder(rule).store(store).build()) {
            assertThat(l.tryAcquire("k").allowed()).isTrue();
        }
    }

    @Test
    void aClosedStoreRefusesWork() {
        RedisStore store = store(Duration.ofSeconds(1));
        store.close();
        store.close();
        assertThatThrownBy(() -> store.decide(RULE, "k", io.sluice.Request.tryAcquire(1)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    }

    /** Lettuce reconnects in the background; poll until a decision goes through. */
    private static Decision awaitAvailable(RateLimiter l) {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (true) {
            try {
                return l.tryAcquire("k");
            } catch (RedisStoreException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
            }
        }
    }
}
