package io.sluice.redis.modes;

import io.sluice.redis.Topology;
import io.sluice.redis.StoredState;
import io.sluice.redis.RedisStore;
import io.sluice.redis.RedisStoreException;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.Mode;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.SlidingWindow;
import io.sluice.SluiceListener;
import io.sluice.redis.internal.DefaultRedisStore;
import io.sluice.testkit.ManualClock;
import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.SharedRedis;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Synced mode on a manual clock: two stores in this JVM stand for two nodes sharing one key. Rounds run when the
 * test calls {@link DefaultRedisStore#syncNow} (the sync interval is long on the manual clock, so the round
 * thread stays out of the way unless a test moves the clock past it), so every push and pull happens at a known
 * point and Redis's state can be checked exactly.
 */
@ExtendWith(SharedRedis.class)
class SyncedModeIT {

    private static final long SEC = 1_000_000;
    /** 2026-01-01T00:00:00Z: a minute boundary. */
    private static final long START = 1_767_225_600_000_000L;

    private final String prefix = "sync-" + UUID.randomUUID().toString().substring(0, 8);
    private final ManualClock clock = new ManualClock(START + 10 * SEC);

    private static RedisServer own;

    @BeforeAll
    static void startOwnServer() {
        own = RedisServer.start();
    }

    @AfterAll
    static void stopOwnServer() {
        own.close();
    }

    private DefaultRedisStore node(Topology topology) {
        return (DefaultRedisStore) topology.builder().prefix(prefix).clock(clock).build();
    }

    private static Rule perMinute(long limit, Duration interval) {
        return Rule.of("sync", FixedWindow.of(limit, Duration.ofMinutes(1))).withMode(Mode.synced(interval));
    }

    private StoredState state(Topology topology, String rule, String key, String limit) {
        return topology.state(prefix + ":{" + rule + ":" + key + "}:" + limit);
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void nodesDecideLocallyAndConvergeThroughSyncRounds(Topology topology) {
        Rule rule = perMinute(10, Duration.ofHours(1));
        try (DefaultRedisStore a = node(topology); DefaultRedisStore b = node(topology);
             RateLimiter la = RateLimiter.builder(rule).store(a).build();
             RateLimiter lb = RateLimiter.builder(rule).store(b).build()) {
            Decision first = la.tryAcquire("k", 3);
            assertThat(first.source()).isEqualTo(Decision.Source.SYNC);
            assertThat(first.remaining()).isEqualTo(7);
            assertThat(first.resetAfterMicros()).as("the window ends at the next minute").isEqualTo(50 * SEC);
            assertThat(state(topology, "sync", "k", "fixed_window")).as("nothing pushed yet").isNull();
            assertThat(lb.tryAcquire("k", 5).remaining()).as("b does not know a's 3 yet").isEqualTo(5);

            a.syncNow();
            assertThat(state(topology, "sync", "k", "fixed_window").count()).isEqualTo(3);
            b.syncNow();
            assertThat(state(topology, "sync", "k", "fixed_window").count()).isEqualTo(8);
            assertThat(lb.peek("k", 0).remaining()).as("b pulled a's 3").isEqualTo(2);

            // a synced before b pushed: it still sees 3 and admits 5 more. The overshoot synced mode allows.
            assertThat(la.tryAcquire("k", 5).allowed()).isTrue();
            a.syncNow();
            assertThat(state(topology, "sync", "k", "fixed_window").count()).isEqualTo(13);
            Decision rejected = la.tryAcquire("k");
            assertThat(rejected.allowed()).isFalse();
            assertThat(rejected.source()).isEqualTo(Decision.Source.SYNC);
            assertThat(rejected.retryAfterMicros()).isEqualTo(50 * SEC);
            b.syncNow();
            assertThat(lb.tryAcquire("k").allowed()).isFalse();
            a.syncNow();
            b.syncNow();
            assertThat(state(topology, "sync", "k", "fixed_window").count()).as("every admission counted once")
                    .isEqualTo(13);
        }
    }

    @Test
    void aWindowThatEndsBetweenSyncsStartsAfreshAndLateAdmissionsAreDropped() {
        Topology topology = Topology.STANDALONE;
        Rule rule = perMinute(10, Duration.ofHours(1));
        try (DefaultRedisStore a = node(topology); RateLimiter la = RateLimiter.builder(rule).store(a).build()) {
            assertThat(la.tryAcquire("k", 6).allowed()).isTrue();
            a.syncNow();
            assertThat(la.tryAcquire("k", 4).allowed()).as("filled locally, not pushed yet").isTrue();
            assertThat(la.tryAcquire("k").allowed()).isFalse();
            clock.setMicros(START + 60 * SEC + 500_000);
            Decision fresh = la.tryAcquire("k", 10);
            assertThat(fresh.allowed()).as("the view's window ended: the node starts the new one from the limit")
                    .isTrue();
            Decision full = la.tryAcquire("k");
            assertThat(full.allowed()).isFalse();
            assertThat(full.retryAfterMicros()).isEqualTo(59 * SEC + 500_000);
            a.syncNow();
            StoredState s = state(topology, "sync", "k", "fixed_window");
            assertThat(s.windowStart()).isEqualTo(START + 60 * SEC);
            assertThat(s.count()).as("the 4 of the ended window were dropped, not carried over").isEqualTo(10);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void slidingWindowNodesShareBothCounts(Topology topology) {
        Rule rule = Rule.of("slide", SlidingWindow.of(10, Duration.ofMinutes(1))).withMode(
                Mode.synced(Duration.ofHours(1)));
        try (DefaultRedisStore a = node(topology); DefaultRedisStore b = node(topology);
             RateLimiter la = RateLimiter.builder(rule).store(a).build();
             RateLimiter lb = RateLimiter.builder(rule).store(b).build()) {
            assertThat(la.tryAcquire("k", 4).allowed()).isTrue();
            assertThat(lb.tryAcquire("k", 2).allowed()).isTrue();
            a.syncNow();
            b.syncNow();
            clock.setMicros(START + 90 * SEC); // half way into the next minute
            a.syncNow();
            // previous 6 weighs 3 at half way: 7 left
            assertThat(la.peek("k", 0).remaining()).isEqualTo(7);
            assertThat(la.tryAcquire("k", 7).allowed()).isTrue();
            assertThat(la.tryAcquire("k").allowed()).isFalse();
            a.syncNow();
            StoredState s = state(topology, "slide", "k", "sliding_window");
            assertThat(List.of(s.integer(0), s.integer(1), s.integer(2)))
                    .as("windowStart, previous, current").containsExactly(START + 60 * SEC, 6L, 7L);
            b.syncNow();
            assertThat(lb.tryAcquire("k").allowed()).as("b pulled a's 7").isFalse();
        }
    }

    @Test
    void aRejectingLimitChargesNoOtherLimitAndEveryLimitIsPushed() {
        Topology topology = Topology.STANDALONE;
        Rule rule = Rule.of("two", FixedWindow.of(5, Duration.ofMinutes(1)).named("per_minute"),
                FixedWindow.of(2, Duration.ofSeconds(1)).named("per_second")).withMode(Mode.synced(Duration.ofHours(1)));
        try (DefaultRedisStore a = node(topology); RateLimiter la = RateLimiter.builder(rule).store(a).build()) {
            assertThat(la.tryAcquire("k", 2).limit()).isEqualTo("per_second");
            Decision d = la.tryAcquire("k");
            assertThat(d.allowed()).isFalse();
            assertThat(d.limit()).isEqualTo("per_second");
            clock.advanceMillis(1000);
            assertThat(la.tryAcquireAtMost("k", 5).granted()).isEqualTo(2);
            a.syncNow();
            assertThat(state(topology, "two", "k", "per_minute").count()).isEqualTo(4);
            assertThat(state(topology, "two", "k", "per_second").count()).isEqualTo(2);
        }
    }

    @Test
    void roundsReportToTheListenerAndIdleKeysLeaveTheMap() {
        List<String> syncs = new CopyOnWriteArrayList<>();
        SluiceListener listener = new SluiceListener() {
            @Override
            public void onSync(int keys, long pushed, long nanos, Throwable error) {
                syncs.add(keys + " keys, " + pushed + " pushed" + (error == null ? "" : ", " + error));
            }
        };
        Rule rule = Rule.of("idle", FixedWindow.of(10, Duration.ofSeconds(1))).withMode(Mode.synced(Duration.ofSeconds(1)));
        try (DefaultRedisStore a = (DefaultRedisStore) Topology.STANDALONE.builder().prefix(prefix).clock(clock)
                .listener(listener).build();
             RateLimiter la = RateLimiter.builder(rule).store(a).build()) {
            la.tryAcquire("x", 2);
            la.tryAcquire("y", 3);
            // The listener hears of a round when its future completes, which can be just after the decision
            // that waited for it returned.
            awaitSize(syncs, 2);
            assertThat(syncs).as("each fresh key synced once, before its first decision")
                    .containsExactly("1 keys, 0 pushed", "1 keys, 0 pushed");
            a.syncNow();
            awaitSize(syncs, 3);
            assertThat(syncs.get(2)).isEqualTo("2 keys, 5 pushed");
            assertThat(a.syncedKeys()).isEqualTo(2);
            clock.advanceMillis(5_000);
            for (int round = 0; round < 4; round++) {
                a.syncNow();
            }
            assertThat(a.syncedKeys()).as("idle for two windows and 4 intervals, nothing to push").isZero();
            assertThat(la.tryAcquire("x").remaining()).as("a key that comes back syncs afresh").isEqualTo(9);
        }
    }

    private static void awaitSize(List<String> events, int size) {
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (events.size() < size && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
    }

    /**
     * Redis frozen mid-push: the round times out, yet Redis runs the call when it thaws. The retry carries the same
     * bucket total and the script absorbs nothing twice. Meanwhile the node decides locally until three intervals
     * have passed without a successful sync, then fails so the failure policy can act; after recovery its pending
     * admissions are pushed and it decides again.
     */
    @Test
    void aTimedOutPushThatRanAnywayIsNotCountedTwiceAndStaleViewsFail() {
        Rule rule = perMinute(100, Duration.ofSeconds(1));
        try (DefaultRedisStore a = (DefaultRedisStore) RedisStore.builder().uri(own.uri()).prefix(prefix).clock(clock)
                .timeout(Duration.ofMillis(300)).build();
             RateLimiter la = RateLimiter.builder(rule).store(a).build()) {
            String key = prefix + ":{sync:k}:fixed_window";
            assertThat(la.tryAcquire("k", 2).allowed()).isTrue();
            a.syncNow();
            assertThat(StoredState.parse(own.call("GET", key)).count()).isEqualTo(2);
            assertThat(la.tryAcquire("k", 3).allowed()).isTrue();
            own.pause();
            try {
                a.syncNow(); // times out after 300 ms; the call waits in Redis's socket
                assertThat(la.peek("k", 1).source()).as("decides locally within 3 intervals")
                        .isEqualTo(Decision.Source.SYNC);
                clock.advanceMillis(3_001);
                assertThatThrownBy(() -> la.tryAcquire("k")).isInstanceOf(RedisStoreException.class)
                        .hasMessageContaining("no sync of rule 'sync' key 'k' with Redis has succeeded for PT3.001S")
                        .hasMessageContaining("more than 3 sync intervals")
                        .hasMessageContaining("the last sync failed: Redis at " + own.uri() + " did not answer");
            } finally {
                own.resume();
            }
            // The timed-out push (and any the round thread tried meanwhile) ran when Redis thawed: 2 + 3 are
            // there before the retry. A second count would make 8.
            awaitCount(key, 5);
            a.syncNow();
            assertThat(StoredState.parse(own.call("GET", key)).count()).as("the retry absorbed nothing twice")
                    .isEqualTo(5);
            Decision d = la.tryAcquire("k");
            assertThat(d.allowed()).isTrue();
            assertThat(d.remaining()).isEqualTo(94);
        }
    }

    /** A restarted (empty) Redis lost the script and the counts: the node's admissions still in the window return. */
    @Test
    void afterARestartThePendingAdmissionsArePushedAgainIntoTheEmptyServer() {
        Rule rule = perMinute(100, Duration.ofSeconds(1));
        try (DefaultRedisStore a = (DefaultRedisStore) RedisStore.builder().uri(own.uri()).prefix(prefix).clock(clock)
                .timeout(Duration.ofMillis(300)).build();
             RateLimiter la = RateLimiter.builder(rule).store(a).build()) {
            String key = prefix + ":{sync:k}:fixed_window";
            assertThat(la.tryAcquire("k", 4).allowed()).isTrue();
            a.syncNow();
            own.kill();
            assertThat(la.tryAcquire("k", 5).allowed()).isTrue();
            a.syncNow(); // fails: connection refused
            own.restart();
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (own.call("GET", key) == null && System.nanoTime() < deadline) {
                a.syncNow(); // reconnects, then NOSCRIPT loads the sync script into the new process
            }
            assertThat(StoredState.parse(own.call("GET", key)).count())
                    .as("everything this node admitted in the window, into the empty server").isEqualTo(9);
        }
    }

    private static void awaitCount(String key, long count) {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (true) {
            StoredState s = StoredState.parse(own.call("GET", key));
            if ((s != null && s.count() == count) || System.nanoTime() > deadline) {
                assertThat(s == null ? null : s.count()).isEqualTo(count);
                return;
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }
}
