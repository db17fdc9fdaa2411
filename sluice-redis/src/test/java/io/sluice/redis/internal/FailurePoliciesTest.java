package io.sluice.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.sluice.Concurrency;
import io.sluice.Decision;
import io.sluice.FailurePolicy;
import io.sluice.FixedWindow;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.SluiceListener;
import io.sluice.TokenBucket;
import io.sluice.redis.BatchRequest;
import io.sluice.redis.RedisStoreException;
import io.sluice.redis.RedisUnavailableException;
import io.sluice.testkit.ManualClock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Each policy's decision for a call that Redis could not decide, without Redis. */
class FailurePoliciesTest {

    private static final Rule BASE = Rule.of("api", FixedWindow.of(100, Duration.ofMinutes(1)).named("per_minute"),
            TokenBucket.of(10, 10, Duration.ofSeconds(1)).named("per_second"));

    private final AtomicLong nanos = new AtomicLong(5_000_000_000L);
    private final CircuitBreaker breaker = new CircuitBreaker("redis://test:1", 1, Duration.ofSeconds(2),
            Duration.ofMillis(600), Duration.ofSeconds(4), SluiceListener.NONE, nanos::get);
    private final ManualClock clock = new ManualClock();
    private final FailurePolicies policies = new FailurePolicies(clock, breaker);

    private static Rule with(FailurePolicy policy) {
        return BASE.withFailurePolicy(policy);
    }

    private static CompletableFuture<Decision> unavailable() {
        return CompletableFuture.failedFuture(new RedisUnavailableException("Redis at redis://test:1 did not answer",
                new RedisCommandTimeoutException("timed out")));
    }

    @Test
    void failOpenAdmitsWhatWasAskedAndSaysSo() {
        Rule rule = with(FailurePolicy.failOpen());
        for (Request request : List.of(Request.tryAcquire(3), Request.tryAcquireAtMost(7),
                Request.reserve(2, 1_000_000), Request.peek(0), Request.peek(4))) {
            Decision d = policies.guard(rule, "k", request, unavailable()).join();
            assertThat(d).isEqualTo(new Decision(true, request.permits(), 0, 0, 0, 0, "per_minute",
                    Decision.NO_LEASE, Decision.Source.FAIL_OPEN));
        }
    }

    @Test
    void failClosedRejectsUntilTheBreakerMayLetACallThrough() {
        Rule rule = with(FailurePolicy.failClosed());
        Decision whileClosed = policies.guard(rule, "k", Request.tryAcquire(1), unavailable()).join();
        assertThat(whileClosed).isEqualTo(new Decision(false, 0, 0, 1, 1, 0, "per_minute", Decision.NO_LEASE,
                Decision.Source.FAIL_CLOSED));

        breaker.call("decide", FailurePoliciesTest::unavailable);
        assertThat(breaker.state()).isEqualTo(SluiceListener.BreakerState.OPEN);
        nanos.addAndGet(Duration.ofMillis(500).toNanos());
        Decision whileOpen = policies.guard(rule, "k", Request.peek(1), unavailable()).join();
        assertThat(whileOpen.allowed()).isFalse();
        assertThat(whileOpen.retryAfterMicros()).isEqualTo(1_500_000);
        assertThat(whileOpen.retryAfterSeconds()).isEqualTo(2);
        assertThat(whileOpen.source()).isEqualTo(Decision.Source.FAIL_CLOSED);
    }

    @Test
    void localFallbackDecidesUnderTheSharedShareOfEveryLimit() {
        Rule rule = with(FailurePolicy.localFallback(0.25));
        int admitted = 0;
        for (int i = 0; i < 10; i++) {
            Decision d = policies.guard(rule, "k", Request.tryAcquire(1), unavailable()).join();
            assertThat(d.source()).isEqualTo(Decision.Source.LOCAL_FALLBACK);
            admitted += d.allowed() ? 1 : 0;
        }
        assertThat(admitted).as("a quarter of the 10-token bucket").isEqualTo(2);
        Decision rejected = policies.decide(rule, "k", Request.tryAcquire(1));
        assertThat(rejected.limit()).isEqualTo("per_second");
        assertThat(policies.decide(rule, "other", Request.tryAcquire(1)).allowed()).as("per key").isTrue();
        policies.reset(rule, "k");
        assertThat(policies.decide(rule, "k", Request.tryAcquire(2)).allowed()).as("reset locally too").isTrue();
    }

    @Test
    void aFallbackLeaseIsMarkedAndReleasedLocally() {
        Rule rule = Rule.of("inflight", Concurrency.of(4, Duration.ofSeconds(30)))
                .withFailurePolicy(FailurePolicy.localFallback(0.5));
        Decision first = policies.decide(rule, "k", Request.tryAcquire(1));
        Decision second = policies.decide(rule, "k", Request.tryAcquire(1));
        assertThat(policies.decide(rule, "k", Request.tryAcquire(1)).allowed()).as("half of 4").isFalse();
        assertThat(FailurePolicies.fallbackLease(first.lease())).isTrue();
        assertThat(first.lease() & ~FailurePolicies.FALLBACK_LEASE).as("the local store's id, a timestamp")
                .isLessThan(1L << 53);
        assertThat(FailurePolicies.fallbackLease(Decision.NO_LEASE)).isFalse();
        assertThat(FailurePolicies.fallbackLease(clock.nowMicros())).as("a Redis lease id").isFalse();
        assertThat(policies.releaseFallback(rule, "k", second.lease())).isTrue();
        assertThat(policies.releaseFallback(rule, "k", second.lease())).as("once").isFalse();
        assertThat(policies.decide(rule, "k", Request.tryAcquire(1)).allowed()).isTrue();
    }

    @Test
    void raiseAndFailuresThatAreNotOutagesPassThrough() {
        assertThatThrownBy(() -> policies.guard(BASE, "k", Request.tryAcquire(1), unavailable()).join())
                .hasCauseInstanceOf(RedisUnavailableException.class);
        RedisStoreException scriptError = new RedisStoreException("Redis at x failed the Sluice script",
                new RedisCommandExecutionException("ERR user_script:1: boom"));
        assertThatThrownBy(() -> policies.guard(with(FailurePolicy.failOpen()), "k", Request.tryAcquire(1),
                CompletableFuture.failedFuture(scriptError)).join()).hasCause(scriptError);
        IllegalArgumentException bad = new IllegalArgumentException("permits must be ...");
        assertThatThrownBy(() -> policies.guard(with(FailurePolicy.failOpen()), "k", Request.tryAcquire(1),
                CompletableFuture.failedFuture(bad)).join()).hasCause(bad);
        CompletableFuture<Decision> ok = CompletableFuture.completedFuture(
                new Decision(true, 1, 5, 0, 0, 0, "per_minute", Decision.NO_LEASE));
        assertThat(policies.guard(with(FailurePolicy.failOpen()), "k", Request.tryAcquire(1), ok)).isSameAs(ok);
    }

    @Test
    void aBatchRequestKeepsWhatRedisDecidedAndDecidesTheRestByEachTargetsPolicy() {
        Rule open = Rule.of("open", FixedWindow.of(5, Duration.ofMinutes(1))).withFailurePolicy(FailurePolicy.failOpen());
        Rule closed = Rule.of("closed", FixedWindow.of(5, Duration.ofMinutes(1)))
                .withFailurePolicy(FailurePolicy.failClosed());
        BatchRequest both = BatchRequest.allOf(Request.tryAcquire(1), new BatchRequest.Target(open, "a"),
                new BatchRequest.Target(closed, "b"));
        Throwable outage = new RedisUnavailableException("breaker open", null);

        Decision refused = policies.decideBatch(both, null, outage);
        assertThat(refused.allowed()).as("all or nothing: the fail_closed target rejects").isFalse();
        assertThat(refused.source()).isEqualTo(Decision.Source.FAIL_CLOSED);

        Decision fromRedis = new Decision(true, 1, 4, 0, 60_000_000, 0, "fixed_window", Decision.NO_LEASE);
        Decision mixed = policies.decideBatch(BatchRequest.allOf(Request.tryAcquire(1),
                        new BatchRequest.Target(closed, "b"), new BatchRequest.Target(open, "a")),
                List.of(CompletableFuture.completedFuture(fromRedis), unavailable()), outage);
        assertThat(mixed.allowed()).isTrue();
        assertThat(mixed.remaining()).isZero();
        assertThat(mixed.source()).as("the tightest target was decided by fail_open").isEqualTo(Decision.Source.FAIL_OPEN);

        BatchRequest raising = BatchRequest.of(BASE, "k", Request.tryAcquire(1));
        assertThatThrownBy(() -> policies.decideBatch(raising, null, outage)).isSameAs(outage);
    }
}
