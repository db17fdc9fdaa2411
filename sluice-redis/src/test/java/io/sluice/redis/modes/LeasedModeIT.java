package io.sluice.redis.modes;

import io.sluice.redis.Topology;
import io.sluice.redis.StoredState;
import io.sluice.redis.RedisStore;
import io.sluice.redis.RedisStoreException;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.Limit;
import io.sluice.Mode;
import io.sluice.RateLimiter;
import io.sluice.RefreshPeriod;
import io.sluice.Rule;
import io.sluice.SluiceListener;
import io.sluice.TokenBucket;
import io.sluice.redis.internal.DefaultRedisStore;
import io.sluice.testkit.ManualClock;
import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.SharedRedis;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Leased mode against a real Redis, driven by a {@link ManualClock} (the store decides with it, so every lease's
 * window, expiry and rate is exact): batch adaptation, leases that end with the window they were charged in,
 * partial grants, remembered rejections, one key from 32 threads, failures, memory, and which requests are not
 * leased. The listener's {@code onLease} shows every lease call: what was asked and what Redis granted.
 */
@ExtendWith(SharedRedis.class)
class LeasedModeIT {

    /** 2026-01-01T00:00:00Z: every window of a second, a minute or an hour starts here. */
    private static final long T0 = 1_767_225_600_000_000L;

    private final String prefix = "leased-" + UUID.randomUUID().toString().substring(0, 8);
    private final ManualClock clock = new ManualClock(T0);
    /** Every lease call: {requested, granted}. */
    private final List<long[]> leases = new CopyOnWriteArrayList<>();
    private final SluiceListener listener = new SluiceListener() {
        @Override
        public void onLease(Rule rule, long requested, long granted) {
            leases.add(new long[] {requested, granted});
        }
    };

    private DefaultRedisStore store(Topology topology) {
        return (DefaultRedisStore) topology.builder().prefix(prefix).clock(clock).listener(listener).build();
    }

    private static Rule leased(String name, Mode mode, Limit... limits) {
        return Rule.of(name, limits).withMode(mode);
    }

    private List<Long> requested() {
        return leases.stream().map(l -> l[0]).toList();
    }

    private long granted() {
        return leases.stream().mapToLong(l -> l[1]).sum();
    }

    @Test
    void aHotKeyDoublesItsBatchUpToTheCapAndAColdKeyAsksForWhatItNeeds() {
        // Automatic cap: 1600 / 16 = 100. One request per millisecond is 1000/s, × 500 ms TTL = 500 wanted.
        Rule rule = leased("batch", Mode.leased(), FixedWindow.of(1600, Duration.ofHours(1)));
        try (DefaultRedisStore store = store(Topology.STANDALONE);
             RateLimiter l = RateLimiter.builder(rule).store(store).build()) {
            Decision first = l.tryAcquire("hot");
            assertThat(first).isEqualTo(new Decision(true, 1, 0, 0, 3_600_000_000L, 0, "fixed_window",
                    Decision.NO_LEASE, Decision.Source.LEASE));
            for (int i = 1; i < 400; i++) {
                clock.advanceMillis(1);
                Decision d = l.tryAcquire("hot");
                assertThat(d.allowed()).isTrue();
                assertThat(d.source()).isEqualTo(Decision.Source.LEASE);
            }
            assertThat(requested()).as("cold start, then doubling up to the cap")
                    .containsExactly(1L, 2L, 4L, 8L, 16L, 32L, 64L, 100L, 100L, 100L);
            assertThat(granted()).isEqualTo(427);
            assertThat(Topology.STANDALONE.state(prefix + ":{batch:hot}:fixed_window").count())
                    .as("Redis charged exactly what was leased").isEqualTo(427);
            clock.advanceMillis(1);
            assertThat(l.tryAcquire("hot").remaining()).as("the lease still holds 27 − 1").isEqualTo(26);

            leases.clear();
            for (int i = 0; i < 5; i++) {
                clock.advance(Duration.ofSeconds(10));
                assertThat(l.tryAcquire("cold").allowed()).isTrue();
            }
            assertThat(requested()).as("one request per 10 s: 0.1/s × 0.5 s rounds up to one permit")
                    .containsExactly(1L, 1L, 1L, 1L, 1L);
            assertThat(store.leaseCalls()).isEqualTo(15);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void aLeaseOfAFixedWindowEndsWithTheWindowItWasChargedIn(Topology topology) {
        // A TTL of a minute, so the end of the one-second window is what bounds the lease.
        Rule rule = leased("window", Mode.leased().withLeaseTtl(Duration.ofMinutes(1)).withMaxBatch(100),
                FixedWindow.of(1000, Duration.ofSeconds(1)));
        try (DefaultRedisStore store = store(topology);
             RateLimiter l = RateLimiter.builder(rule).store(store).build()) {
            for (int i = 0; i < 300; i++) {
                assertThat(l.tryAcquire("k").allowed()).isTrue();
                clock.advanceMillis(1);
            }
            assertThat(granted()).isEqualTo(327);
            clock.setMicros(T0 + 999_999);
            Decision last = l.tryAcquire("k");
            assertThat(last.remaining()).as("spent locally in the window's last microsecond").isEqualTo(26);
            assertThat(last.resetAfterMicros()).isEqualTo(1);
            assertThat(store.leaseCalls()).isEqualTo(9);
            assertThat(store.expiredLeasePermits()).isZero();

            clock.setMicros(T0 + 1_000_000);
            Decision next = l.tryAcquire("k");
            assertThat(store.leaseCalls()).as("the new window needs a new lease").isEqualTo(10);
            assertThat(store.expiredLeasePermits()).as("the 26 left of the old window are lost").isEqualTo(26);
            long newLease = leases.get(leases.size() - 1)[1];
            assertThat(next.remaining()).isEqualTo(newLease - 1);
            StoredState state = topology.state(prefix + ":{window:k}:fixed_window");
            assertThat(state.windowStart()).isEqualTo(T0 + 1_000_000);
            assertThat(state.count()).as("the new window is charged the new lease only").isEqualTo(newLease);
        }
    }

    @Test
    void aLeaseOfARefreshPeriodEndsWithItsCycle() {
        Rule rule = leased("cycle", Mode.leased().withLeaseTtl(Duration.ofMinutes(1)).withMaxBatch(50),
                RefreshPeriod.of(1000, Duration.ofSeconds(1)));
        long origin = T0 + 123_456; // cycles count from the key's first request
        clock.setMicros(origin);
        try (DefaultRedisStore store = store(Topology.STANDALONE);
             RateLimiter l = RateLimiter.builder(rule).store(store).build()) {
            for (int i = 0; i < 100; i++) {
                assertThat(l.tryAcquire("k").allowed()).isTrue();
                clock.advanceMillis(1);
            }
            assertThat(requested()).containsExactly(1L, 2L, 4L, 8L, 16L, 32L, 50L);
            clock.setMicros(origin + 999_999);
            assertThat(l.tryAcquire("k").remaining()).isEqualTo(12);
            assertThat(store.leaseCalls()).isEqualTo(7);
            clock.setMicros(origin + 1_000_000);
            assertThat(l.tryAcquire("k").allowed()).isTrue();
            assertThat(store.leaseCalls()).as("a new cycle, a new lease").isEqualTo(8);
            assertThat(store.expiredLeasePermits()).isEqualTo(12);
        }
    }

    @Test
    void severalLimitsWithClientTimeEndTheLeaseAtTheShortestEpochWindow() {
        Rule rule = leased("multi", Mode.leased().withLeaseTtl(Duration.ofMinutes(1)).withMaxBatch(100),
                TokenBucket.of(100_000, 1, Duration.ofHours(1)).named("bucket"),
                FixedWindow.of(5_000, Duration.ofMinutes(1)).named("per_minute"),
                FixedWindow.of(1_000, Duration.ofSeconds(1)).named("per_second"));
        clock.setMicros(T0 + 500_000);
        try (DefaultRedisStore store = store(Topology.STANDALONE);
             RateLimiter l = RateLimiter.builder(rule).store(store).build()) {
            for (int i = 0; i < 300; i++) {
                assertThat(l.tryAcquire("k").source()).isEqualTo(Decision.Source.LEASE);
                clock.advanceMillis(1);
            }
            assertThat(granted()).isEqualTo(327);
            clock.setMicros(T0 + 999_999);
            l.tryAcquire("k");
            assertThat(store.leaseCalls()).isEqualTo(9);
            clock.setMicros(T0 + 1_000_000);
            l.tryAcquire("k");
            assertThat(store.leaseCalls()).as("the per-second window ended").isEqualTo(10);
            assertThat(store.expiredLeasePermits()).isEqualTo(26);
        }
    }

    @Test
    void aRuleWhoseWindowEndsCannotBeKnownIsDecidedExactly() {
        // Several limits and a window aligned to the first request: no reply says when that window ends.
        Rule rule = leased("unbounded", Mode.leased(),
                FixedWindow.of(100, Duration.ofMinutes(1)).withAlign(FixedWindow.Align.FIRST_REQUEST),
                TokenBucket.of(50, 1, Duration.ofSeconds(1)));
        try (DefaultRedisStore store = store(Topology.STANDALONE);
             RateLimiter l = RateLimiter.builder(rule).store(store).build()) {
            Decision d = l.tryAcquire("k");
            assertThat(d.source()).isEqualTo(Decision.Source.STORE);
            assertThat(d.remaining()).isEqualTo(49);
            assertThat(store.leaseCalls()).isZero();
        }
    }

    @Test
    void aPartialGrantIsKeptForSmallerRequestsAndARejectionIsRememberedForItsRetryAfterOrTheTtl() {
        Rule exactRule = Rule.of("partial", FixedWindow.of(10, Duration.ofHours(1)));
        Rule rule = exactRule.withMode(Mode.leased());
        try (DefaultRedisStore store = store(Topology.STANDALONE);
             RedisStore otherNode = Topology.STANDALONE.builder().prefix(prefix).clock(clock).build();
             RateLimiter l = RateLimiter.builder(rule).store(store).build();
             RateLimiter other = RateLimiter.builder(exactRule).store(otherNode).build()) {
            clock.advance(Duration.ofMinutes(10));
            assertThat(other.tryAcquire("k", 7).allowed()).isTrue();

            Decision five = l.tryAcquire("k", 5);
            assertThat(five).as("Redis had 3 of 5: rejected, retry when the window is full again").isEqualTo(
                    new Decision(false, 0, 3, 3_000_000_000L, 3_000_000_000L, 0, "fixed_window", Decision.NO_LEASE,
                            Decision.Source.LEASE));
            assertThat(leases).hasSize(1);
            assertThat(leases.get(0)).containsExactly(5, 3);

            assertThat(l.tryAcquire("k", 2)).isEqualTo(new Decision(true, 2, 1, 0, 3_000_000_000L, 0,
                    "fixed_window", Decision.NO_LEASE, Decision.Source.LEASE));
            assertThat(l.tryAcquire("k", 1).remaining()).isZero();
            assertThat(store.leaseCalls()).as("both spent from the partial lease").isEqualTo(1);

            Decision none = l.tryAcquire("k", 1);
            assertThat(none.allowed()).isFalse();
            assertThat(none.retryAfterMicros()).isEqualTo(3_000_000_000L);
            assertThat(leases.get(1)[1]).isZero();

            clock.advanceMillis(100);
            Decision remembered = l.tryAcquire("k", 1);
            assertThat(remembered).as("rejected locally, the retry-after counting down").isEqualTo(new Decision(
                    false, 0, 0, 2_999_900_000L, 2_999_900_000L, 0, "fixed_window", Decision.NO_LEASE,
                    Decision.Source.LEASE));
            assertThat(l.tryAcquireAtMost("k", 4).allowed()).isFalse();
            assertThat(store.leaseCalls()).isEqualTo(2);

            clock.advanceMillis(400); // the TTL (500 ms) is shorter than the retry-after: ask again
            assertThat(l.tryAcquire("k", 1).allowed()).isFalse();
            assertThat(store.leaseCalls()).isEqualTo(3);
            assertThat(Topology.STANDALONE.state(prefix + ":{partial:k}:fixed_window").count()).isEqualTo(10);
        }
    }

    @Test
    void aBestEffortRequestSpendsWhatTheLeaseHolds() {
        Rule rule = leased("atmost", Mode.leased().withMaxBatch(8), FixedWindow.of(100, Duration.ofHours(1)));
        try (DefaultRedisStore store = store(Topology.STANDALONE);
             RateLimiter l = RateLimiter.builder(rule).store(store).build()) {
            assertThat(l.tryAcquire("k", 3).allowed()).isTrue();              // lease of 3 (cold)
            assertThat(l.tryAcquire("k", 1).allowed()).isTrue();              // lease of 6: 1 spent, 5 held
            assertThat(requested()).containsExactly(3L, 6L);
            Decision some = l.tryAcquireAtMost("k", 20);
            assertThat(some.granted()).as("what the lease held").isEqualTo(5);
            assertThat(some.remaining()).isZero();
            Decision more = l.tryAcquireAtMost("k", 20);
            assertThat(leases.get(2)[0]).as("an empty lease asks for the whole request").isEqualTo(20);
            assertThat(more.granted()).isEqualTo(20);
            assertThat(Topology.STANDALONE.state(prefix + ":{atmost:k}:fixed_window").count()).isEqualTo(29);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void thirtyTwoThreadsOnOneKeyNeverAdmitMoreThanTheLimit(Topology topology) throws Exception {
        // Leases of at most 64 living 20 ms of a clock that every attempt moves by 10 µs: leases expire,
        // are renewed and run out concurrently; half of the threads use the asynchronous API.
        long limit = 2_000;
        Rule rule = leased("threads", Mode.leased().withLeaseTtl(Duration.ofMillis(20)).withMaxBatch(64),
                FixedWindow.of(limit, Duration.ofHours(1)));
        int threads = 32;
        AtomicLong admitted = new AtomicLong();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try (DefaultRedisStore store = store(topology);
             RateLimiter l = RateLimiter.builder(rule).store(store).build()) {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> running = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                boolean async = t % 2 == 0;
                running.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < 400; i++) {
                        clock.advanceMicros(10);
                        Decision d = async ? l.tryAcquireAsync("k", 1).get(5, TimeUnit.SECONDS) : l.tryAcquire("k");
                        if (d.allowed()) {
                            admitted.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : running) {
                f.get(60, TimeUnit.SECONDS);
            }
            long charged = topology.state(prefix + ":{threads:k}:fixed_window").count();
            System.out.println("leased, 32 threads × 400 attempts on one key: admitted " + admitted + " of limit "
                    + limit + ", Redis charged " + charged + " in " + store.leaseCalls() + " lease calls, "
                    + store.expiredLeasePermits() + " permits expired unspent");
            assertThat(admitted.get()).as("never more than the limit").isLessThanOrEqualTo(limit);
            assertThat(charged).as("Redis charged what the lease calls granted").isEqualTo(granted());
            long unaccounted = charged - admitted.get() - store.expiredLeasePermits();
            assertThat(unaccounted).as("granted = admitted + expired + still held (at most a batch)")
                    .isBetween(0L, 64L);
            assertThat(store.leaseCalls()).as("far fewer calls than decisions").isLessThan(threads * 400 / 10);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void leasedPermitsStaySpendableWhileRedisIsDownAndAFailedLeaseCallFailsEveryoneWaitingForIt()
            throws Exception {
        Rule rule = leased("outage", Mode.leased().withMaxBatch(50), FixedWindow.of(1000, Duration.ofHours(1)));
        try (RedisServer own = RedisServer.start();
             DefaultRedisStore store = (DefaultRedisStore) RedisStore.builder().uri(own.uri()).prefix(prefix)
                     .clock(clock).listener(listener).timeout(Duration.ofMillis(300)).build();
             RateLimiter l = RateLimiter.builder(rule).store(store).build()) {
            for (int i = 0; i < 100; i++) {
                assertThat(l.tryAcquire("k").allowed()).isTrue();
                clock.advanceMillis(1);
            }
            assertThat(requested()).containsExactly(1L, 2L, 4L, 8L, 16L, 32L, 50L);
            long held = granted() - 100; // 13
            own.pause();
            try {
                for (int i = 0; i < held; i++) {
                    Decision d = l.tryAcquire("k");
                    assertThat(d.allowed()).as("spent from the lease with Redis paused").isTrue();
                    assertThat(d.source()).isEqualTo(Decision.Source.LEASE);
                }
                long calls = store.leaseCalls();
                List<CompletableFuture<Decision>> waiting = new ArrayList<>();
                for (int i = 0; i < 8; i++) {
                    waiting.add(l.tryAcquireAsync("k", 1));
                }
                for (CompletableFuture<Decision> f : waiting) {
                    assertThatThrownBy(() -> f.get(5, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                            .hasCauseInstanceOf(RedisStoreException.class);
                }
                assertThat(store.leaseCalls()).as("one call in flight, seven waited for it").isEqualTo(calls + 1);
                assertThatThrownBy(() -> l.tryAcquire("k")).isInstanceOf(RedisStoreException.class)
                        .hasMessageContaining("did not answer");
            } finally {
                own.resume();
            }
            Decision after = l.tryAcquire("k");
            assertThat(after.allowed()).isTrue();
            assertThat(after.source()).isEqualTo(Decision.Source.LEASE);
        }
    }

    @Test
    void requestsQueuedForALeaseCallAreDecidedInArrivalOrderAndRejectedWhenRedisRunsOut() throws Exception {
        Rule rule = leased("queue", Mode.leased(), FixedWindow.of(6, Duration.ofHours(1)));
        try (RedisServer own = RedisServer.start();
             DefaultRedisStore store = (DefaultRedisStore) RedisStore.builder().uri(own.uri()).prefix(prefix)
                     .clock(clock).listener(listener).timeout(Duration.ofSeconds(5)).build();
             RateLimiter l = RateLimiter.builder(rule).store(store).build()) {
            List<CompletableFuture<Decision>> queued = new ArrayList<>();
            own.pause(); // holds the first lease call in flight while the others queue behind it
            try {
                for (int i = 0; i < 10; i++) {
                    queued.add(l.tryAcquireAsync("k", 1));
                }
            } finally {
                own.resume();
            }
            List<Boolean> admitted = new ArrayList<>();
            for (CompletableFuture<Decision> f : queued) {
                Decision d = f.get(10, TimeUnit.SECONDS);
                assertThat(d.source()).isEqualTo(Decision.Source.LEASE);
                admitted.add(d.allowed());
            }
            // The first call asked for 1 (a cold key); the nine left asked for 9 at once and got the 5 left.
            assertThat(requested()).containsExactly(1L, 9L);
            assertThat(leases.get(1)[1]).isEqualTo(5);
            assertThat(admitted).containsExactly(true, true, true, true, true, true, false, false, false, false);
            Decision rejected = queued.get(9).get();
            assertThat(rejected.retryAfterMicros()).as("until the window ends").isEqualTo(3_600_000_000L);
            assertThat(store.leaseCalls()).isEqualTo(2);
        }
    }

    @Test
    void aRequestQueuedAfterTheWindowEndedIsNotServedFromALeaseOfThatWindow() throws Exception {
        Rule rule = leased("late", Mode.leased().withMaxBatch(10), FixedWindow.of(1000, Duration.ofSeconds(1)));
        try (RedisServer own = RedisServer.start();
             DefaultRedisStore store = (DefaultRedisStore) RedisStore.builder().uri(own.uri()).prefix(prefix)
                     .clock(clock).listener(listener).timeout(Duration.ofSeconds(5)).build();
             RateLimiter l = RateLimiter.builder(rule).store(store).build()) {
            clock.setMicros(T0 + 980_000);
            for (int i = 0; i < 15; i++) {              // leases of 1, 2, 4 and 8, all spent: about 1000/s
                l.tryAcquire("k");
                clock.advanceMillis(1);
            }
            clock.setMicros(T0 + 999_000);
            CompletableFuture<Decision> early;
            CompletableFuture<Decision> late;
            own.pause();
            try {
                early = l.tryAcquireAsync("k", 1);         // sends a lease of 10 in window 0
                clock.setMicros(T0 + 1_000_500);           // window 0 ends while the call is in flight
                late = l.tryAcquireAsync("k", 1);          // queued behind it, in window 1
            } finally {
                own.resume();
            }
            assertThat(early.get(10, TimeUnit.SECONDS).allowed()).as("decided on the reply").isTrue();
            assertThat(late.get(10, TimeUnit.SECONDS).allowed()).isTrue();
            assertThat(requested()).containsExactly(1L, 2L, 4L, 8L, 10L, 10L);
            assertThat(store.expiredLeasePermits()).as("the 9 left of window 0 were not spent in window 1")
                    .isEqualTo(9);
            StoredState state = StoredState.parse(own.call("GET", prefix + ":{late:k}:fixed_window"));
            assertThat(state.windowStart()).isEqualTo(T0 + 1_000_000);
            assertThat(state.count()).isEqualTo(10);
        }
    }

    @Test
    void idleKeysWhoseLeaseExpiredAreDropped() {
        Rule rule = leased("memory", Mode.leased(), FixedWindow.of(100, Duration.ofHours(1)));
        try (DefaultRedisStore store = store(Topology.STANDALONE);
             RateLimiter l = RateLimiter.builder(rule).store(store).build()) {
            for (int i = 0; i < 200; i++) {
                l.tryAcquire("key-" + i);
            }
            assertThat(store.leaseEntries()).isEqualTo(200);
            clock.advanceMillis(400);
            l.tryAcquire("busy");
            clock.advanceMillis(700); // 1.1 s after the first sweep: the next lease call sweeps
            l.tryAcquire("busy");     // its lease of one is spent: a lease call, which sweeps
            assertThat(store.leaseEntries()).as("only the key used within the TTL is left").isEqualTo(1);
            assertThat(l.tryAcquire("key-0").remaining()).as("a dropped key starts over with a new lease")
                    .isZero();
        }
    }

    @Test
    void waitsReservationsAndPeeksAreDecidedInRedisAndResetDropsTheLease() throws Exception {
        Rule rule = leased("routing", Mode.leased().withMaxBatch(10), TokenBucket.of(100, 1, Duration.ofHours(1)));
        try (DefaultRedisStore store = store(Topology.STANDALONE);
             RateLimiter l = RateLimiter.builder(rule).store(store).build()) {
            l.tryAcquire("k", 4);                                   // lease of 4
            l.tryAcquire("k", 1);                                   // lease of 8: 7 held
            assertThat(granted()).isEqualTo(12);
            Decision peek = l.peek("k", 0);
            assertThat(peek.source()).isEqualTo(Decision.Source.STORE);
            assertThat(peek.remaining()).as("Redis: the node's unspent lease is charged").isEqualTo(88);
            Decision reserved = l.reserve("k", 1, Duration.ofSeconds(1));
            assertThat(reserved.source()).isEqualTo(Decision.Source.STORE);
            assertThat(reserved.remaining()).isEqualTo(87);
            Decision noWait = l.reserve("k", 1, Duration.ZERO);
            assertThat(noWait.source()).as("a reservation that may not wait is a try").isEqualTo(
                    Decision.Source.LEASE);
            assertThat(noWait.remaining()).isEqualTo(6);
            assertThat(l.acquire("k", 1, Duration.ofSeconds(1)).source()).isEqualTo(Decision.Source.STORE);
            long calls = store.leaseCalls();

            l.reset("k");
            assertThat(store.expiredLeasePermits()).as("reset drops the 6 held").isEqualTo(6);
            assertThat(l.tryAcquire("k").allowed()).isTrue();
            assertThat(store.leaseCalls()).isEqualTo(calls + 1);
        }
    }

    @Test
    void aClockOutsideTheSupportedRangeIsAnErrorInLeasedModeToo() {
        Rule rule = leased("badclock", Mode.leased(), FixedWindow.of(100, Duration.ofHours(1)));
        clock.setMicros(-1);
        try (DefaultRedisStore store = store(Topology.STANDALONE);
             RateLimiter l = RateLimiter.builder(rule).store(store).build()) {
            assertThatThrownBy(() -> l.tryAcquire("k")).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("clock reading");
            assertThat(leases).as("no lease was taken").isEmpty();
        }
    }

    @Test
    void aChangedLimitDropsTheLeasesTakenUnderThePreviousOne() {
        Rule rule = leased("change", Mode.leased().withMaxBatch(10), FixedWindow.of(100, Duration.ofHours(1)));
        try (DefaultRedisStore store = store(Topology.STANDALONE);
             RateLimiter l = RateLimiter.builder(rule).store(store).build()) {
            l.tryAcquire("k", 4);
            l.tryAcquire("k", 1);                                    // 7 held
            l.updateLimit(FixedWindow.of(10, Duration.ofHours(1)));
            Decision d = l.tryAcquire("k");
            assertThat(d.allowed()).as("12 charged under a limit of 10 now").isFalse();
            assertThat(store.expiredLeasePermits()).isEqualTo(7);
        }
    }
}
