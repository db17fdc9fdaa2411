package io.sluice.redis.failure;

import io.sluice.redis.StoredState;
import io.sluice.redis.RedisStore;
import io.sluice.redis.BatchRequest;
import io.sluice.redis.RedisUnavailableException;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.Concurrency;
import io.sluice.Decision;
import io.sluice.FailurePolicy;
import io.sluice.FixedWindow;
import io.sluice.RateLimiter;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.SluiceListener;
import io.sluice.SluiceListener.BreakerState;
import io.sluice.redis.internal.DefaultRedisStore;
import io.sluice.testkit.redis.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Real outages of a real redis-server — frozen (SIGSTOP), killed and restarted empty (SIGKILL), paused by
 * {@code CLIENT PAUSE} — under each failure policy, with callers deciding all the while: the policy decides
 * within one timeout, the breaker then answers at local speed, recovery after the cool-down is automatic, and
 * Redis holds no more than what it admitted plus the calls that timed out (which may still run when Redis
 * resumes), never what the policy admitted.
 */
class OutagePolicyIT {

    private static final Duration TIMEOUT = Duration.ofMillis(150);
    private static final Duration COOL_DOWN = Duration.ofMillis(300);
    private static final int BREAKER_FAILURES = 3;
    private static final int CALLERS = 4;
    private static final Duration OUTAGE = Duration.ofMillis(1200);
    /** What "returned promptly rather than hanging" means: one timeout and a generous second. */
    private static final Duration PROMPT = TIMEOUT.plusSeconds(1);
    private static final Duration RECOVERY = Duration.ofSeconds(10);
    private static final double SHARE = 0.0001;
    /** A day's window: the outage never straddles two windows (but for a 1-in-20,000 chance). */
    private static final FixedWindow PER_DAY = FixedWindow.of(1_000_000, Duration.ofDays(1)).named("per_day");

    private static RedisServer server;

    enum Outage { SIGSTOP, SIGKILL, CLIENT_PAUSE }

    @BeforeAll
    static void startOwnServer() {
        server = RedisServer.start();
        // A first connection in a cold JVM loads Lettuce and Netty and can take longer than the 150 ms timeout,
        // which bounds the connection handshake too; this one has a timeout no loaded machine reaches.
        RedisStore.builder().uri(server.uri()).timeout(Duration.ofSeconds(30)).build().close();
    }

    @AfterAll
    static void stopOwnServer() {
        server.close();
    }

    static Stream<Arguments> outagesAndPolicies() {
        List<Arguments> cases = new ArrayList<>();
        for (Outage outage : Outage.values()) {
            for (FailurePolicy policy : List.of(FailurePolicy.failOpen(), FailurePolicy.failClosed(),
                    FailurePolicy.localFallback(SHARE))) {
                cases.add(Arguments.of(outage, policy));
            }
        }
        return cases.stream();
    }

    /** One call as a caller saw it. */
    record Call(long startNanos, long endNanos, Decision decision, Throwable error) {
        long nanos() {
            return endNanos - startNanos;
        }
    }

    /** Breaker transitions and failed store calls, as the store reports them. */
    static final class Recorder implements SluiceListener {
        final List<String> transitions = Collections.synchronizedList(new ArrayList<>());
        final AtomicInteger failedCalls = new AtomicInteger();
        final AtomicInteger probes = new AtomicInteger();

        @Override
        public void onBreakerTransition(BreakerState from, BreakerState to, String reason) {
            transitions.add(from + "->" + to);
            if (to == BreakerState.HALF_OPEN) {
                probes.incrementAndGet();
            }
        }

        @Override
        public void onStoreCall(String operation, long nanos, Throwable error) {
            if (error != null) {
                failedCalls.incrementAndGet();
            }
        }
    }

    @ParameterizedTest(name = "{0} with {1}")
    @MethodSource("outagesAndPolicies")
    void thePolicyDecidesWithinOneTimeoutThenAtLocalSpeedAndRedisTakesOverAgain(Outage outage, FailurePolicy policy)
            throws Exception {
        String prefix = "outage-" + outage.name().toLowerCase() + "-" + policy.name();
        Rule rule = Rule.of("api", PER_DAY).withFailurePolicy(policy);
        Decision.Source degraded = switch (policy.kind()) {
            case FAIL_OPEN -> Decision.Source.FAIL_OPEN;
            case FAIL_CLOSED -> Decision.Source.FAIL_CLOSED;
            default -> Decision.Source.LOCAL_FALLBACK;
        };
        Recorder recorder = new Recorder();
        try (RedisStore store = RedisStore.builder().uri(server.uri()).prefix(prefix).timeout(TIMEOUT)
                .circuitBreaker(BREAKER_FAILURES, COOL_DOWN).listener(recorder).build();
             RateLimiter limiter = RateLimiter.builder(rule).store(store).build()) {
            for (int i = 0; i < 20; i++) {
                Decision d = limiter.tryAcquire("before");
                assertThat(d.allowed()).isTrue();
                assertThat(d.source()).isEqualTo(Decision.Source.STORE);
            }

            long outageStart = System.nanoTime();
            begin(outage);
            ConcurrentLinkedQueue<Call> calls = new ConcurrentLinkedQueue<>();
            AtomicBoolean stop = new AtomicBoolean();
            List<Thread> callers = new ArrayList<>();
            for (int t = 0; t < CALLERS; t++) {
                Thread caller = new Thread(() -> {
                    while (!stop.get()) {
                        long start = System.nanoTime();
                        try {
                            Decision d = limiter.tryAcquire("during");
                            calls.add(new Call(start, System.nanoTime(), d, null));
                        } catch (RuntimeException e) {
                            calls.add(new Call(start, System.nanoTime(), null, e));
                        }
                        sleepMillis(1);
                    }
                }, "caller-" + t);
                caller.start();
                callers.add(caller);
            }
            long outageEnd;
            try {
                sleepUntil(outageStart + OUTAGE.toNanos());
            } finally {
                outageEnd = System.nanoTime();
                end(outage);
            }
            long deadline = System.nanoTime() + RECOVERY.toNanos();
            while (System.nanoTime() < deadline && calls.stream().noneMatch(c -> c.startNanos() > outageEnd
                    && c.decision() != null && c.decision().source() == Decision.Source.STORE)) {
                sleepMillis(5);
            }
            stop.set(true);
            for (Thread caller : callers) {
                caller.join(5_000);
            }
            List<Call> all = new ArrayList<>(calls);

            assertThat(all).as("every call got a decision, none an exception")
                    .allSatisfy(c -> assertThat(c.error()).isNull());
            assertThat(all).as("every call returned within one timeout and a generous second")
                    .allSatisfy(c -> assertThat(Duration.ofNanos(c.nanos())).isLessThan(PROMPT));

            List<Call> during = all.stream().filter(c -> c.endNanos() < outageEnd).toList();
            assertThat(during).as("calls that ended during the outage were decided by the policy")
                    .isNotEmpty().allSatisfy(c -> assertThat(c.decision().source()).isEqualTo(degraded));
            long firstDecided = during.stream().mapToLong(Call::endNanos).min().orElseThrow();
            assertThat(Duration.ofNanos(firstDecided - outageStart)).as("the policy applied within one timeout")
                    .isLessThan(PROMPT);

            long slow = all.stream().filter(c -> c.nanos() >= TIMEOUT.toNanos()).count(); // reported below
            // Counted by the store (each call that reached Lettuce and failed), not by the clock: on a loaded
            // machine a call the breaker answered at once can still take longer than the 150 ms timeout.
            assertThat(recorder.failedCalls.get()).as("calls that reached Redis and waited a timeout (or failed):"
                    + " the breaker's threshold, the callers in flight when it opened, and one per probe")
                    .isLessThanOrEqualTo(BREAKER_FAILURES + CALLERS + recorder.probes.get());
            assertThat(during.size()).as("once open, the breaker answers at local speed (a timeout per call would "
                    + "allow about " + CALLERS * OUTAGE.toMillis() / TIMEOUT.toMillis() + ")").isGreaterThan(100);
            long[] sorted = during.stream().mapToLong(Call::nanos).sorted().toArray();
            assertThat(Duration.ofNanos(sorted[sorted.length / 2])).as("median call during the outage")
                    .isLessThan(TIMEOUT.dividedBy(3));

            switch (policy.kind()) {
                case FAIL_OPEN -> assertThat(during).allSatisfy(c -> assertThat(c.decision()).isEqualTo(
                        new Decision(true, 1, 0, 0, 0, 0, "per_day", Decision.NO_LEASE, Decision.Source.FAIL_OPEN)));
                case FAIL_CLOSED -> assertThat(during).allSatisfy(c -> {
                    assertThat(c.decision().allowed()).isFalse();
                    assertThat(c.decision().retryAfterMicros()).isBetween(1L,
                            COOL_DOWN.plus(TIMEOUT).plusMillis(100).toNanos() / 1000);
                });
                default -> {
                    long local = all.stream().filter(c -> c.decision().source() == Decision.Source.LOCAL_FALLBACK
                            && c.decision().allowed()).count();
                    assertThat(local).as("the local fallback admits its share of the limit, 1,000,000 x " + SHARE)
                            .isEqualTo(100);
                }
            }

            assertThat(recorder.transitions).as("the breaker opened, and closed again after the outage")
                    .startsWith("CLOSED->OPEN", "OPEN->HALF_OPEN").endsWith("HALF_OPEN->CLOSED");
            assertThat(((DefaultRedisStore) store).breakerState()).isEqualTo(BreakerState.CLOSED);
            assertThat(all.stream().anyMatch(c -> c.startNanos() > outageEnd
                    && c.decision().source() == Decision.Source.STORE)).as("Redis decides again").isTrue();

            long storeAdmitted = all.stream().filter(c -> c.decision().source() == Decision.Source.STORE
                    && c.decision().allowed()).count();
            long charged = count(store, prefix, "during");
            assertThat(charged).as("Redis holds what it admitted, plus at most the calls that failed (a timed-out "
                    + "call may run when Redis resumes), and nothing the policy decided")
                    .isBetween(storeAdmitted, storeAdmitted + recorder.failedCalls.get());
            if (outage != Outage.SIGKILL) {
                assertThat(count(store, prefix, "before")).as("state from before the outage, charged once").isEqualTo(20);
            }
            long firstStoreAgain = all.stream().filter(c -> c.startNanos() > outageEnd
                    && c.decision().source() == Decision.Source.STORE).mapToLong(Call::endNanos).min().orElseThrow();
            System.out.printf("%s/%s: %d calls, %d during the outage, first decided by the policy after %d ms, %d "
                            + "slow, %d probes, %d failed store calls, Redis decides again %d ms after the outage, "
                            + "%d admitted by Redis, %d charged in Redis (%d timed-out calls ran later)%n", outage, policy,
                    all.size(), during.size(), (firstDecided - outageStart) / 1_000_000, slow, recorder.probes.get(),
                    recorder.failedCalls.get(), (firstStoreAgain - outageEnd) / 1_000_000, storeAdmitted, charged,
                    charged - storeAdmitted);
        } finally {
            if (!server.isRunning()) {
                server.restart();
            }
            server.resume();
        }
    }

    @Test
    void withTheBreakerOpenEveryOperationFollowsItsRulesPolicyAtLocalSpeed() throws Exception {
        Rule raise = Rule.of("raise", PER_DAY);
        Rule open = Rule.of("open", PER_DAY).withFailurePolicy(FailurePolicy.failOpen());
        Rule closed = Rule.of("closed", PER_DAY).withFailurePolicy(FailurePolicy.failClosed());
        Rule inflight = Rule.of("inflight", Concurrency.of(10, Duration.ofMinutes(1)))
                .withFailurePolicy(FailurePolicy.localFallback(0.2));
        Duration coolDown = Duration.ofSeconds(30);
        Recorder recorder = new Recorder();
        try (RedisStore store = RedisStore.builder().uri(server.uri()).prefix("open-breaker").timeout(TIMEOUT)
                .circuitBreaker(1, coolDown).listener(recorder).build();
             RateLimiter raising = RateLimiter.builder(raise).store(store).build();
             RateLimiter opening = RateLimiter.builder(open).store(store).build();
             RateLimiter closing = RateLimiter.builder(closed).store(store).build();
             RateLimiter leasing = RateLimiter.builder(inflight).store(store).build()) {
            long redisLease = leasing.tryAcquire("k").lease();
            assertThat(redisLease).isNotEqualTo(Decision.NO_LEASE);
            server.kill();

            long start = System.nanoTime();
            assertThatThrownBy(() -> raising.tryAcquire("k")).as("raise, the default: the timeout")
                    .isInstanceOf(RedisUnavailableException.class).hasMessageContaining("did not answer within PT0.15S");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(PROMPT);
            assertThat(((DefaultRedisStore) store).breakerState()).isEqualTo(BreakerState.OPEN);

            start = System.nanoTime();
            assertThatThrownBy(() -> raising.tryAcquire("k")).isInstanceOf(RedisUnavailableException.class)
                    .hasMessageContaining("circuit breaker open until").hasMessageContaining("charged nothing");
            assertThatThrownBy(() -> raising.tryAcquireAsync("k", 1).get()).hasCauseInstanceOf(
                    RedisUnavailableException.class);
            assertThatThrownBy(() -> raising.release("k", 12)).isInstanceOf(RedisUnavailableException.class);
            assertThatThrownBy(() -> opening.reset("k")).as("reset has no policy: it raises")
                    .isInstanceOf(RedisUnavailableException.class);

            assertThat(opening.peek("k", 0)).isEqualTo(new Decision(true, 0, 0, 0, 0, 0, "per_day", Decision.NO_LEASE,
                    Decision.Source.FAIL_OPEN));
            assertThat(opening.tryAcquireAtMost("k", 5).granted()).isEqualTo(5);
            assertThat(opening.tryAcquireAsync("k", 2).get().source()).isEqualTo(Decision.Source.FAIL_OPEN);
            assertThat(opening.reserve("k", 3, Duration.ofSeconds(1)).waitMicros()).isZero();

            Decision rejected = closing.peek("k", 1);
            assertThat(rejected.allowed()).isFalse();
            assertThat(rejected.source()).isEqualTo(Decision.Source.FAIL_CLOSED);
            assertThat(Duration.ofNanos(rejected.retryAfterMicros() * 1000)).as("until the cool-down ends")
                    .isBetween(coolDown.minusSeconds(5), coolDown);

            Decision local = leasing.tryAcquire("k", 2);
            assertThat(local.source()).isEqualTo(Decision.Source.LOCAL_FALLBACK);
            assertThat(leasing.tryAcquire("k", 1).allowed()).as("a fifth of 10 in flight").isFalse();
            assertThat(leasing.release("k", local.lease())).as("a fallback lease goes back locally").isTrue();
            assertThat(leasing.releaseAsync("k", redisLease).get())
                    .as("a Redis lease cannot go back now: it holds until its TTL").isFalse();

            List<Decision> batch = store.decideAll(List.of(BatchRequest.of(open, "a", Request.tryAcquire(1)),
                    BatchRequest.of(closed, "b", Request.tryAcquire(1)),
                    BatchRequest.allOf(Request.tryAcquire(1), new BatchRequest.Target(open, "{t}a"),
                            new BatchRequest.Target(closed, "{t}b"))));
            assertThat(batch).extracting(Decision::source).containsExactly(Decision.Source.FAIL_OPEN,
                    Decision.Source.FAIL_CLOSED, Decision.Source.FAIL_CLOSED);
            assertThat(batch).extracting(Decision::allowed).containsExactly(true, false, false);
            assertThatThrownBy(() -> store.decideAll(List.of(BatchRequest.of(open, "a", Request.tryAcquire(1)),
                    BatchRequest.of(raise, "c", Request.tryAcquire(1))))).as("one raise rule raises the batch")
                    .isInstanceOf(RedisUnavailableException.class);

            // Without waiting for Redis: no call but the first reached Lettuce (a call to the killed server fails
            // and is counted); the time is a ceiling against a hang, loose enough for a loaded machine.
            assertThat(recorder.failedCalls).as("only the first call reached Lettuce").hasValue(1);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).as("all of that without waiting for Redis")
                    .isLessThan(PROMPT);
            assertThat(recorder.transitions).containsExactly("CLOSED->OPEN");
        } finally {
            server.restart();
        }
    }

    private static void begin(Outage outage) {
        switch (outage) {
            case SIGSTOP -> server.pause();
            case SIGKILL -> server.kill();
            // ALL: every command of every other client waits, EVALSHA included; the pause ends by itself.
            case CLIENT_PAUSE -> server.call("CLIENT", "PAUSE", Long.toString(OUTAGE.toMillis()), "ALL");
        }
    }

    private static void end(Outage outage) {
        switch (outage) {
            case SIGSTOP -> server.resume();
            case SIGKILL -> server.restart();
            case CLIENT_PAUSE -> { }
        }
    }

    /** The fixed_window count Redis holds for {@code key}, 0 when there is no state. */
    private static long count(RedisStore store, String prefix, String key) {
        String redisKey = ((DefaultRedisStore) store).layout().stateKey("api", key, "per_day");
        StoredState state = StoredState.parse(server.call("GET", redisKey));
        return state == null ? 0 : state.count();
    }

    private static void sleepUntil(long nanos) throws InterruptedException {
        long left;
        while ((left = nanos - System.nanoTime()) > 0) {
            Thread.sleep(Math.max(1, left / 1_000_000));
        }
    }

    private static void sleepMillis(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
