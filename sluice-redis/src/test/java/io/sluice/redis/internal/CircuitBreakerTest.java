package io.sluice.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import io.sluice.SluiceListener;
import io.sluice.SluiceListener.BreakerState;
import io.sluice.redis.RedisStoreException;
import io.sluice.redis.RedisUnavailableException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The breaker's state machine on a clock the test moves, with calls whose futures the test completes. */
class CircuitBreakerTest {

    private static final Duration COOL_DOWN = Duration.ofSeconds(2);
    private static final Duration PROBE_ANSWER = Duration.ofMillis(600);
    private static final Duration PROBE_LIMIT = Duration.ofSeconds(3);

    private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
    private final List<String> transitions = Collections.synchronizedList(new ArrayList<>());
    private final List<String> storeCalls = Collections.synchronizedList(new ArrayList<>());
    private final SluiceListener listener = new SluiceListener() {
        @Override
        public void onBreakerTransition(BreakerState from, BreakerState to, String reason) {
            transitions.add(from + "->" + to);
        }

        @Override
        public void onStoreCall(String operation, long nanos, Throwable error) {
            storeCalls.add(operation + (error == null ? "" : " failed"));
        }
    };
    private final CircuitBreaker breaker = new CircuitBreaker("redis://test:1", 3, COOL_DOWN, PROBE_ANSWER,
            PROBE_LIMIT, listener, nanos::get);
    private final AtomicInteger runs = new AtomicInteger();

    /** Runs one call through the breaker; the returned future is the call's, for the test to complete. */
    private CompletableFuture<String> pending() {
        CompletableFuture<String> call = new CompletableFuture<>();
        lastResult = breaker.call("decide", () -> {
            runs.incrementAndGet();
            return call;
        });
        return call;
    }

    private CompletableFuture<String> lastResult;

    private CompletableFuture<String> callEnding(Throwable error) {
        CompletableFuture<String> call = pending();
        if (error == null) {
            call.complete("ok");
        } else {
            call.completeExceptionally(error);
        }
        return lastResult;
    }

    private static Throwable timeout() {
        return new RedisUnavailableException("Redis at redis://test:1 did not answer within PT1S",
                new RedisCommandTimeoutException("Command timed out after 1 second(s)"));
    }

    private void advance(Duration d) {
        nanos.addAndGet(d.toNanos());
    }

    private void open() {
        for (int i = 0; i < 3; i++) {
            callEnding(timeout());
        }
        assertThat(breaker.state()).isEqualTo(BreakerState.OPEN);
    }

    @Test
    void aClosedBreakerRunsEveryCallAndHandsBackItsResult() throws Exception {
        assertThat(callEnding(null).get()).isEqualTo("ok");
        assertThatThrownBy(() -> callEnding(timeout()).get()).isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(RedisUnavailableException.class);
        assertThat(runs).hasValue(2);
        assertThat(breaker.state()).isEqualTo(BreakerState.CLOSED);
        assertThat(breaker.retryAfterMicros()).isEqualTo(1);
        assertThat(storeCalls).containsExactly("decide", "decide failed");
    }

    @Test
    void theThresholdthConsecutiveUnavailableCallOpensIt() {
        callEnding(timeout());
        callEnding(new RedisConnectionException("Connection refused: /127.0.0.1:1"));
        assertThat(breaker.state()).isEqualTo(BreakerState.CLOSED);
        CompletableFuture<String> third = callEnding(new RedisCommandTimeoutException("raw Lettuce timeout"));
        assertThat(breaker.state()).isEqualTo(BreakerState.OPEN);
        assertThat(transitions).containsExactly("CLOSED->OPEN");
        // The caller of the call that opened it sees its failure only once the breaker has counted it.
        assertThat(third).isCompletedExceptionally();
    }

    @Test
    void anAnsweredCallResetsTheCountAndABadCallIsNotCounted() {
        callEnding(timeout());
        callEnding(timeout());
        callEnding(null);
        callEnding(timeout());
        callEnding(timeout());
        assertThat(breaker.state()).as("success reset the count").isEqualTo(BreakerState.CLOSED);
        callEnding(new RedisStoreException("Redis at redis://test:1 failed the Sluice script: ...",
                new RedisCommandExecutionException("ERR user_script:1: boom")));
        callEnding(timeout());
        callEnding(timeout());
        assertThat(breaker.state()).as("a script error is an answer: it reset the count").isEqualTo(BreakerState.CLOSED);
        callEnding(new IllegalArgumentException("bad rule"));
        callEnding(new IllegalStateException("the Redis store is closed"));
        assertThat(breaker.state()).as("bad input neither counts nor resets").isEqualTo(BreakerState.CLOSED);
        callEnding(timeout());
        assertThat(breaker.state()).isEqualTo(BreakerState.OPEN);
    }

    @Test
    void unavailableReplyErrorsCountLikeTimeouts() {
        callEnding(new RedisCommandExecutionException("LOADING Redis is loading the dataset in memory"));
        callEnding(new RedisCommandExecutionException("CLUSTERDOWN The cluster is down"));
        callEnding(new RedisCommandExecutionException("READONLY You can't write against a read only replica."));
        assertThat(breaker.state()).isEqualTo(BreakerState.OPEN);
    }

    @Test
    void anOpenBreakerFailsFastWithoutRunningTheCallAndSaysUntilWhen() {
        open();
        int ran = runs.get();
        advance(Duration.ofMillis(500));
        CompletableFuture<String> refused = breaker.call("decide", () -> {
            runs.incrementAndGet();
            return new CompletableFuture<>();
        });
        assertThat(runs).as("not run").hasValue(ran);
        assertThat(refused).isCompletedExceptionally();
        assertThatThrownBy(refused::join).hasCauseInstanceOf(RedisUnavailableException.class)
                .hasMessageContaining("Redis at redis://test:1 is unavailable: circuit breaker open until ")
                .hasMessageContaining("cool-down PT2S after 3 consecutive failed calls")
                .hasMessageContaining("charged nothing")
                .hasMessageContaining("did not answer within PT1S");
        assertThat(refused.handle((x, e) -> e.getStackTrace().length).join()).as("stackless").isZero();
        assertThat(breaker.retryAfterMicros()).isEqualTo(1_500_000);
        assertThat(storeCalls).as("a refused call is not a store call").hasSize(3);
    }

    @Test
    void afterTheCoolDownExactlyOneProbeRunsAndItsAnswerClosesTheBreaker() {
        open();
        advance(COOL_DOWN.minusNanos(1));
        callEnding(null);
        assertThat(breaker.state()).as("1 ns before the end of the cool-down").isEqualTo(BreakerState.OPEN);
        advance(Duration.ofNanos(1));
        int ran = runs.get();
        CompletableFuture<String> probe = pending();
        assertThat(runs).hasValue(ran + 1);
        assertThat(breaker.state()).isEqualTo(BreakerState.HALF_OPEN);

        advance(Duration.ofMillis(100));
        CompletableFuture<String> other = callEnding(null);
        assertThat(runs).as("others fail fast while the probe is in flight").hasValue(ran + 1);
        assertThatThrownBy(other::join).hasMessageContaining("circuit breaker half-open: one probe call is in flight");
        assertThat(breaker.retryAfterMicros()).as("until the probe must be answered").isEqualTo(500_000);

        probe.complete("ok");
        assertThat(breaker.state()).isEqualTo(BreakerState.CLOSED);
        assertThat(transitions).containsExactly("CLOSED->OPEN", "OPEN->HALF_OPEN", "HALF_OPEN->CLOSED");
        callEnding(null);
        assertThat(runs).hasValue(ran + 2);
    }

    @Test
    void aFailedProbeOpensTheBreakerForAnotherCoolDown() {
        open();
        advance(COOL_DOWN);
        CompletableFuture<String> probe = pending();
        advance(Duration.ofMillis(700));
        probe.completeExceptionally(timeout());
        assertThat(breaker.state()).isEqualTo(BreakerState.OPEN);
        assertThat(breaker.retryAfterMicros()).isEqualTo(COOL_DOWN.toNanos() / 1000);
        int ran = runs.get();
        advance(COOL_DOWN.minusMillis(1));
        callEnding(null);
        assertThat(runs).hasValue(ran);
        advance(Duration.ofMillis(1));
        callEnding(null);
        assertThat(runs).hasValue(ran + 1);
        assertThat(breaker.state()).isEqualTo(BreakerState.CLOSED);
        assertThat(transitions).containsExactly("CLOSED->OPEN", "OPEN->HALF_OPEN", "HALF_OPEN->OPEN",
                "OPEN->HALF_OPEN", "HALF_OPEN->CLOSED");
    }

    @Test
    void aProbeThatNeverReachedRedisLetsTheNextCallProbe() {
        open();
        advance(COOL_DOWN);
        callEnding(new IllegalArgumentException("bad request"));
        assertThat(breaker.state()).isEqualTo(BreakerState.OPEN);
        int ran = runs.get();
        callEnding(null);
        assertThat(runs).as("probes at once, no new cool-down").hasValue(ran + 1);
        assertThat(breaker.state()).isEqualTo(BreakerState.CLOSED);
    }

    @Test
    void aProbeThatNeverEndsIsGivenUpAfterTheProbeLimit() {
        open();
        advance(COOL_DOWN);
        pending();
        int ran = runs.get();
        advance(PROBE_LIMIT.minusNanos(1));
        callEnding(null);
        assertThat(runs).hasValue(ran);
        advance(Duration.ofNanos(1));
        callEnding(null);
        assertThat(runs).as("a second probe").hasValue(ran + 1);
        assertThat(breaker.state()).isEqualTo(BreakerState.CLOSED);
    }

    @Test
    void resultsOfCallsStartedBeforeTheBreakerOpenedDoNotMoveIt() {
        CompletableFuture<String> late = pending();
        CompletableFuture<String> lateFailure = pending();
        open();
        late.complete("ok");
        assertThat(breaker.state()).as("an old success does not close an open breaker").isEqualTo(BreakerState.OPEN);
        advance(COOL_DOWN);
        CompletableFuture<String> probe = pending();
        lateFailure.completeExceptionally(timeout());
        assertThat(breaker.state()).as("an old failure does not reopen a half-open one").isEqualTo(BreakerState.HALF_OPEN);
        probe.complete("ok");
        assertThat(breaker.state()).isEqualTo(BreakerState.CLOSED);
        callEnding(timeout());
        callEnding(timeout());
        assertThat(breaker.state()).as("counting starts afresh when it closes").isEqualTo(BreakerState.CLOSED);
    }

    @Test
    void manyCallersAtTheEndOfTheCoolDownGetOneProbe() throws Exception {
        open();
        advance(COOL_DOWN);
        int ran = runs.get();
        int threads = 8;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch go = new CountDownLatch(1);
        try {
            List<java.util.concurrent.Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                done.add(pool.submit(() -> {
                    go.await();
                    for (int i = 0; i < 1000; i++) {
                        breaker.call("decide", () -> {
                            runs.incrementAndGet();
                            return new CompletableFuture<String>();
                        });
                    }
                    return null;
                }));
            }
            go.countDown();
            for (java.util.concurrent.Future<?> f : done) {
                f.get(10, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(runs).as("exactly one probe among 8000 calls").hasValue(ran + 1);
        assertThat(transitions).containsExactly("CLOSED->OPEN", "OPEN->HALF_OPEN");
    }

    @Test
    void aListenerThatThrowsDoesNotBreakTheBreaker() {
        SluiceListener throwing = new SluiceListener() {
            @Override
            public void onBreakerTransition(BreakerState from, BreakerState to, String reason) {
                throw new IllegalStateException("listener bug");
            }

            @Override
            public void onStoreCall(String operation, long nanos, Throwable error) {
                throw new IllegalStateException("listener bug");
            }
        };
        CircuitBreaker b = new CircuitBreaker("redis://test:1", 1, COOL_DOWN, PROBE_ANSWER, PROBE_LIMIT, throwing,
                nanos::get);
        CompletableFuture<String> failed = b.call("decide", () -> CompletableFuture.failedFuture(timeout()));
        assertThatThrownBy(failed::join).hasCauseInstanceOf(RedisUnavailableException.class);
        assertThat(b.state()).isEqualTo(BreakerState.OPEN);
        advance(COOL_DOWN);
        assertThat(b.call("decide", () -> CompletableFuture.completedFuture("ok")).join()).isEqualTo("ok");
        assertThat(b.state()).isEqualTo(BreakerState.CLOSED);
    }

    @Test
    void aCallThatThrowsInsteadOfReturningAFutureFailsItsFuture() {
        CompletableFuture<String> f = breaker.call("decide", () -> {
            throw new IllegalStateException("the Redis store is closed");
        });
        assertThatThrownBy(f::join).hasCauseInstanceOf(IllegalStateException.class);
        assertThat(breaker.state()).isEqualTo(BreakerState.CLOSED);
    }

    @Test
    void settingsAreValidatedWithClearMessages() {
        assertThatThrownBy(() -> new CircuitBreaker("x", 0, COOL_DOWN, PROBE_ANSWER, PROBE_LIMIT, listener, nanos::get))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("breaker failures must be in [1, 1000], was 0");
        assertThatThrownBy(() -> new CircuitBreaker("x", 3, Duration.ZERO, PROBE_ANSWER, PROBE_LIMIT, listener, nanos::get))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("breaker cool_down");
    }
}
