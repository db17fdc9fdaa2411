package io.sluice.redis.failure;

import io.sluice.redis.StoredState;
import io.sluice.redis.TcpProxy;
import io.sluice.redis.RedisStoreException;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.redis.internal.DefaultRedisStore;
import io.sluice.redis.internal.RedisUris;
import io.sluice.redis.internal.StoreSettings;
import io.sluice.testkit.ManualClock;
import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.SharedRedis;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Lettuce re-sends in-flight commands after a reconnect (at-least-once). These tests put a proxy between
 * Lettuce and Redis, make the network fail at the worst moments, and check what Redis charged.
 */
@ExtendWith(SharedRedis.class)
class ReplaySafetyIT {

    private static final Rule RULE = Rule.of("replay", FixedWindow.of(5, Duration.ofMinutes(1)));

    private final String prefix = "replay-" + UUID.randomUUID().toString().substring(0, 8);
    private final ManualClock clock = new ManualClock();
    private TcpProxy proxy;

    @BeforeEach
    void startProxy() throws Exception {
        proxy = new TcpProxy(RedisServer.shared().port());
    }

    @AfterEach
    void stopProxy() {
        proxy.close();
    }

    private DefaultRedisStore store(Duration timeout, boolean deduplicate) {
        return DefaultRedisStore.connect(new StoreSettings(RedisUris.parse(List.of(proxy.uri()), false, timeout), false,
                prefix, timeout, clock, deduplicate));
    }

    private String count(String key) {
        StoredState state = StoredState.parse(RedisServer.shared().call("GET", prefix + ":{replay:" + key + "}:fixed_window"));
        return state == null ? null : Long.toString(state.count());
    }

    @Test
    void aReplayedCallAfterALostReplyIsChargedOnceAndAnswersTheOriginalDecision() {
        try (DefaultRedisStore store = store(Duration.ofSeconds(5), true)) {
            assertThat(store.decide(RULE, "k", Request.tryAcquire(2)).remaining()).isEqualTo(3);
            int connectionsBefore = proxy.connections();

            proxy.dropReplyAfter(store.usesFunctions() ? "FCALL" : "EVALSHA");
            Decision d = store.decide(RULE, "k", Request.tryAcquire(1));

            assertThat(proxy.connections()).as("Lettuce reconnected").isEqualTo(connectionsBefore + 1);
            assertThat(store.replayedReplies()).as("the script saw the same call twice").isEqualTo(1);
            assertThat(count("k")).as("charged once").isEqualTo("3");
            assertThat(d.allowed()).isTrue();
            assertThat(d.remaining()).as("the first execution's decision").isEqualTo(2);
            assertThat(store.decide(RULE, "k", Request.tryAcquire(1)).remaining()).isEqualTo(1);
        }
    }

    /**
     * Why the request id has a key of its own rather than living in the state it charged: between the first run
     * and the re-sent one another client writes the same state, so a state that remembered only its last writer
     * would have forgotten this call and charged it again.
     */
    @Test
    void aReplayedCallAfterAnotherClientsWriteIsStillChargedOnce() {
        try (DefaultRedisStore store = store(Duration.ofSeconds(5), true);
             DefaultRedisStore other = DefaultRedisStore.connect(new StoreSettings(RedisUris.parse(
                     List.of(RedisServer.shared().uri()), false, Duration.ofSeconds(5)), false, prefix,
                     Duration.ofSeconds(5), clock, true))) {
            assertThat(store.decide(RULE, "k", Request.tryAcquire(2)).remaining()).isEqualTo(3);
            Decision[] between = new Decision[1];
            proxy.dropReplyAfter(store.usesFunctions() ? "FCALL" : "EVALSHA",
                    () -> between[0] = other.decide(RULE, "k", Request.tryAcquire(1)));

            Decision d = store.decide(RULE, "k", Request.tryAcquire(1));

            assertThat(between[0].remaining()).as("the other client charged after the first run").isEqualTo(1);
            assertThat(store.replayedReplies()).as("the script saw the same call twice").isEqualTo(1);
            assertThat(count("k")).as("2 + 1 + the other client's 1: charged once").isEqualTo("4");
            assertThat(d.remaining()).as("the first execution's decision").isEqualTo(2);
        }
    }

    @Test
    void withoutRequestIdsTheSameFailureChargesTwice() {
        // The control experiment: it shows the failure above really makes Lettuce run the script twice.
        try (DefaultRedisStore store = store(Duration.ofSeconds(5), false)) {
            store.decide(RULE, "k", Request.tryAcquire(2));
            proxy.dropReplyAfter(store.usesFunctions() ? "FCALL" : "EVALSHA");
            Decision d = store.decide(RULE, "k", Request.tryAcquire(1));
            assertThat(count("k")).as("charged twice").isEqualTo("4");
            assertThat(d.remaining()).as("the client sees only the second execution").isEqualTo(1);
        }
    }

    @Test
    void lettuceResendsACommandThatWasInFlightWhenTheConnectionDropped() throws Exception {
        try (DefaultRedisStore store = store(Duration.ofSeconds(5), true)) {
            store.decide(RULE, "warmup", Request.tryAcquire(1));
            proxy.blackhole(true);
            CompletableFuture<Decision> pending = store.decideAsync(RULE, "k", Request.tryAcquire(1));
            Thread.sleep(200);
            assertThat(pending).isNotDone();
            assertThat(count("k")).as("not arrived").isNull();
            proxy.blackhole(false);
            proxy.dropConnections();
            Decision d = pending.get(5, TimeUnit.SECONDS);
            assertThat(d.allowed()).isTrue();
            assertThat(count("k")).as("re-sent after the reconnect, charged once").isEqualTo("1");
        }
    }

    @Test
    void aCommandThatTimedOutIsNeverResent() throws Exception {
        Duration timeout = Duration.ofMillis(300);
        try (DefaultRedisStore store = store(timeout, true)) {
            store.decide(RULE, "warmup", Request.tryAcquire(1));
            proxy.blackhole(true);
            long start = System.nanoTime();
            // The synchronous call returns when Lettuce itself has timed the command out (its timer ticks
            // every 100 ms): from then on Lettuce will not write it again.
            assertThatThrownBy(() -> store.decide(RULE, "lost", Request.tryAcquire(1)))
                    .isInstanceOf(RedisStoreException.class).hasMessageContaining("did not answer within PT0.3S")
                    .hasCauseInstanceOf(io.lettuce.core.RedisCommandTimeoutException.class);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isBetween(timeout, Duration.ofSeconds(1));

            proxy.resetCounters();
            proxy.blackhole(false);
            proxy.dropConnections();
            assertThat(store.decide(RULE, "after", Request.tryAcquire(1)).allowed()).isTrue();
            Thread.sleep(2 * timeout.toMillis());

            assertThat(proxy.forwardedAny("{replay:lost}")).as("the timed-out call was not re-sent").isFalse();
            assertThat(count("lost")).isNull();
            assertThat(count("after")).isEqualTo("1");
        }
    }

    @Test
    void theRequestKeyLivesTwiceTheTimeoutPlusASecond() {
        try (DefaultRedisStore store = store(Duration.ofMillis(700), true)) {
            store.decide(RULE, "ttl", Request.tryAcquire(1));
            List<?> keys = (List<?>) RedisServer.shared().call("KEYS", prefix + ":{replay:ttl}:r:*");
            assertThat(keys).hasSize(1);
            long pttl = (Long) RedisServer.shared().call("PTTL", (String) keys.get(0));
            // Set to 2 × 700 + 1,000 ms; read back at once, but a loaded machine may take a while between the
            // two: anything above one timeout plus a second shows the factor two.
            assertThat(pttl).isGreaterThan(1_700L).isLessThanOrEqualTo(2_400L);
        }
    }

    @Test
    void peeksAndRejectionsThatChangeNothingLeaveNoRequestKey() {
        try (DefaultRedisStore store = store(Duration.ofSeconds(1), true)) {
            store.decide(RULE, "quiet", Request.peek(1));
            store.decide(RULE, "quiet", Request.tryAcquire(5));
            store.decide(RULE, "quiet", Request.tryAcquire(1));
            assertThat((List<?>) RedisServer.shared().call("KEYS", prefix + ":{replay:quiet}:r:*")).hasSize(1);
        }
    }
}
