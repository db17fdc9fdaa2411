package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.linecorp.armeria.common.CommonPools;
import io.sluice.Decision;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.SluiceListener;
import io.sluice.Store;
import io.sluice.TokenBucket;
import io.sluice.testkit.redis.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The server's Redis store on {@link RedisEventLoops} against a real redis-server: its replies are handled on
 * Armeria's event loops (no Lettuce I/O thread of its own), many commands written within one turn of a loop
 * (their flushes consolidated) are each answered in order, and closing the resources leaves Armeria's loops
 * running. The consolidation's effect on Redis's reads is measured in docs/benchmarks-by-hand.md.
 */
class RedisEventLoopsIT {

    private static final Rule RULE = Rule.of("loops", TokenBucket.of(1_000, 1, Duration.ofHours(1))
            .named("per_key"));
    private static final StoreFactory.RedisTuning TUNING = new StoreFactory.RedisTuning(Duration.ofSeconds(10), 3,
            Duration.ofMillis(250));

    @Test
    void repliesAreHandledOnArmeriasEventLoops() throws Exception {
        try (RedisServer redis = RedisServer.start(); RedisEventLoops loops = RedisEventLoops.create(
                TUNING.breakerPause()); Store store = open(redis, loops)) {
            assertThat(loops.sharesArmeriaLoops()).as("Armeria and Lettuce on the same transport (epoll on Linux)")
                    .isTrue();
            assertThat(store.decideAsync(RULE, "warm", Request.tryAcquire(1)).get(10, TimeUnit.SECONDS).allowed())
                    .isTrue();
            // Frozen, Redis cannot answer before the callback below is attached: it then runs on the thread that
            // reads the reply, the connection's event loop.
            redis.pause();
            CompletableFuture<String> thread;
            try {
                thread = store.decideAsync(RULE, "k", Request.tryAcquire(1))
                        .thenApply(d -> Thread.currentThread().getName());
            } finally {
                redis.resume();
            }
            assertThat(thread.get(10, TimeUnit.SECONDS)).startsWith("armeria-common-worker");
        }
    }

    @Test
    void manyCommandsWrittenInOneLoopTurnAreEachAnsweredRightly() throws Exception {
        int calls = 200;
        try (RedisServer redis = RedisServer.start(); RedisEventLoops loops = RedisEventLoops.create(
                TUNING.breakerPause()); Store store = open(redis, loops)) {
            // Sent from one task on one of Armeria's loops: one turn of that loop, and one batch of write tasks on
            // the connection's loop when it is another one; their flushes are consolidated into a few writes.
            CompletableFuture<List<CompletableFuture<Decision>>> sent = new CompletableFuture<>();
            CommonPools.workerGroup().next().execute(() -> {
                List<CompletableFuture<Decision>> decisions = new ArrayList<>(calls);
                for (int i = 0; i < calls; i++) {
                    decisions.add(store.decideAsync(RULE, "key:" + (i % 100), Request.tryAcquire(1 + i / 100)));
                }
                sent.complete(decisions);
            });
            List<CompletableFuture<Decision>> decisions = sent.get(10, TimeUnit.SECONDS);
            for (int i = 0; i < calls; i++) {
                Decision d = decisions.get(i).get(10, TimeUnit.SECONDS);
                // Each key is charged 1 then 2 permits, in the order sent: nothing lost, mixed up or reordered.
                assertThat(d.allowed()).isTrue();
                assertThat(d.remaining()).as("call %d", i).isEqualTo(i < 100 ? 999 : 997);
            }
        }
    }

    @Test
    void closingTheResourcesLeavesArmeriasLoopsRunning() throws Exception {
        try (RedisServer redis = RedisServer.start()) {
            RedisEventLoops loops = RedisEventLoops.create(TUNING.breakerPause());
            try (Store store = open(redis, loops)) {
                assertThat(store.decideAsync(RULE, "k", Request.tryAcquire(1)).get(10, TimeUnit.SECONDS).allowed())
                        .isTrue();
            }
            loops.close();
            assertThat(CommonPools.workerGroup().isShuttingDown()).isFalse();
            assertThat(CommonPools.workerGroup().submit(() -> "still running").get(10, TimeUnit.SECONDS))
                    .isEqualTo("still running");
        }
    }

    private static Store open(RedisServer redis, RedisEventLoops loops) {
        return StoreFactory.open(redis.uri(), () -> SluiceListener.NONE, TUNING, null, loops.resources());
    }

}
