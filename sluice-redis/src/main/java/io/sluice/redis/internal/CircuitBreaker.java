package io.sluice.redis.internal;

import io.sluice.SluiceListener;
import io.sluice.SluiceListener.BreakerState;
import io.sluice.redis.RedisUnavailableException;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The {@link RedisGate} of a Redis store: a circuit breaker, so that an outage costs a few timeouts and not one
 * per request.
 *
 * <pre>
 *   CLOSED ──(threshold consecutive unavailable calls)──▶ OPEN ──(cool-down over: the next call probes)──▶ HALF_OPEN
 *   HALF_OPEN ──(the probe is answered)──▶ CLOSED
 *   HALF_OPEN ──(the probe is unavailable)──▶ OPEN, for another cool-down
 * </pre>
 *
 * <ul>
 * <li><b>CLOSED</b>: every call runs. A call that ends {@linkplain RedisFailures.Outcome#UNAVAILABLE unavailable}
 * (timeout, refused or lost connection, "cannot serve now" replies) counts; one that Redis answered, even with
 * a script error, resets the count; one that failed before reaching Redis (bad input) does neither. The
 * {@code threshold}-th consecutive unavailable call opens the breaker.</li>
 * <li><b>OPEN</b> for the cool-down: calls fail fast with a {@link RedisUnavailableException} that says until
 * when, without running (nothing reaches Lettuce, nothing is charged in Redis).</li>
 * <li><b>HALF_OPEN</b>: the first call after the cool-down is the probe and runs; the others fail fast until it
 * ends. Answered closes the breaker; unavailable opens it for another cool-down; a probe that failed before
 * reaching Redis opens it with the cool-down already over, so the next call probes again. A probe that has
 * not ended after {@code probeLimit} (it should: Lettuce times every command out) is given up and the next
 * call probes.</li>
 * </ul>
 *
 * <p>Each transition is logged once (WARN on opening, with the failure; INFO otherwise) and reported to
 * {@link SluiceListener#onBreakerTransition}. A fast-failed call is not reported to
 * {@link SluiceListener#onStoreCall}: it never reached the store.
 *
 * <p><b>Cost.</b> The state is one {@link AtomicReference} to an immutable phase, swapped by compare-and-set on
 * transitions only, and a counter of consecutive failures. A call while closed reads the phase, runs, and
 * registers one shared observer on the call's future (no capturing lambda unless a listener wants timings); the
 * future returned is that observer's stage, so a caller that sees a failure sees it after the breaker counted
 * it. A fast-failed call allocates its exception (without a stack trace) and a failed future. Results of calls
 * started in an earlier closed period that end while the breaker is open or half-open are ignored; only the
 * probe's result moves a half-open breaker.
 *
 * <p>"Consecutive" is per store, across all keys and nodes: on a Cluster with one master down, calls to the
 * healthy masters keep resetting the count, so the breaker may stay closed and each call to the lost master
 * costs one timeout (decided by the rule's policy) until the failover completes.
 */
public final class CircuitBreaker implements RedisGate {

    private static final Log log = Log.get(CircuitBreaker.class);

    /** The breaker's state and what it needs to refuse calls; immutable, replaced on every transition. */
    private sealed interface Phase permits Closed, Open, HalfOpen {
        BreakerState state();
    }

    private record Closed() implements Phase {
        @Override
        public BreakerState state() {
            return BreakerState.CLOSED;
        }
    }

    /** Open until {@code untilNanos} (ticker time); {@code message} is the refusal's, {@code cause} what opened it. */
    private record Open(long untilNanos, String message, Throwable cause) implements Phase {
        @Override
        public BreakerState state() {
            return BreakerState.OPEN;
        }
    }

    /** The probe started at {@code startNanos}; {@code cause} is what opened the breaker. */
    private record HalfOpen(long startNanos, String message, Throwable cause) implements Phase {
        @Override
        public BreakerState state() {
            return BreakerState.HALF_OPEN;
        }
    }

    /** A refused call: thrown at local speed, many per second during an outage, so it has no stack trace. */
    static final class BreakerOpenException extends RedisUnavailableException {
        BreakerOpenException(String message, Throwable cause) {
            super(message, cause, false);
        }
    }

    private static final Closed CLOSED = new Closed();

    private final String where;
    private final int threshold;
    private final Duration coolDown;
    private final long coolDownNanos;
    private final long probeAnswerNanos;
    private final long probeLimitNanos;
    private final SluiceListener listener;
    private final boolean timing;
    private final LongSupplier ticker;
    private final AtomicReference<Phase> phase = new AtomicReference<>(CLOSED);
    private final AtomicInteger failures = new AtomicInteger();
    private final BiConsumer<Object, Throwable> closedObserver = this::closedCallEnded;

    /**
     * @param where       the Redis described in messages, e.g. {@code redis://127.0.0.1:6379}
     * @param threshold   consecutive unavailable calls that open the breaker
     * @param coolDown    how long it stays open
     * @param probeAnswer how long a probe may take to be answered (the store's timeout plus Lettuce's timer
     *                    tick): the retry-after reported while half-open
     * @param probeLimit  how long a probe may be in flight before another call may probe instead
     * @param ticker      monotonic nanoseconds ({@code System::nanoTime} outside tests)
     */
    public CircuitBreaker(String where, int threshold, Duration coolDown, Duration probeAnswer, Duration probeLimit,
                          SluiceListener listener, LongSupplier ticker) {
        this("Redis at " + where, threshold, coolDown, probeAnswer, probeLimit, listener, ticker, true);
    }

    /**
     * A breaker in front of another service than Redis (the remote store's {@code sluice serve}): as the
     * constructor, with {@code subject} naming the service in messages as it is, e.g.
     * {@code sluice serve at http://10.0.0.5:8080}.
     */
    public static CircuitBreaker named(String subject, int threshold, Duration coolDown, Duration probeAnswer,
                                       Duration probeLimit, SluiceListener listener, LongSupplier ticker) {
        return new CircuitBreaker(subject, threshold, coolDown, probeAnswer, probeLimit, listener, ticker, true);
    }

    private CircuitBreaker(String subject, int threshold, Duration coolDown, Duration probeAnswer, Duration probeLimit,
                           SluiceListener listener, LongSupplier ticker, boolean named) {
        StoreSettings.checkBreaker(threshold, coolDown);
        this.where = subject;
        this.threshold = threshold;
        this.coolDown = coolDown;
        this.coolDownNanos = coolDown.toNanos();
        this.probeAnswerNanos = probeAnswer.toNanos();
        this.probeLimitNanos = probeLimit.toNanos();
        this.listener = listener;
        this.timing = listener != SluiceListener.NONE;
        this.ticker = ticker;
    }

    /** The breaker of a store with these settings, on the system's monotonic clock. */
    static CircuitBreaker of(StoreSettings settings, String where) {
        return new CircuitBreaker(where, settings.breakerFailures(), settings.breakerCoolDown(),
                settings.timeout().plus(StoreSettings.LETTUCE_TIMER_TICK), settings.callLimit(), settings.listener(),
                System::nanoTime);
    }

    @Override
    public <T> CompletableFuture<T> call(String operation, Supplier<CompletableFuture<T>> call) {
        Phase p = phase.get();
        return p == CLOSED ? closedCall(operation, call) : guardedCall(p, operation, call);
    }

    /** The current state. */
    public BreakerState state() {
        return phase.get().state();
    }

    /**
     * How long until the store may be asked again, in microseconds, at least 1: while open, until the cool-down
     * ends; while half-open, until the probe must have been answered; while closed, 1 (now).
     */
    public long retryAfterMicros() {
        Phase p = phase.get();
        long now = ticker.getAsLong();
        long nanos;
        if (p instanceof Open o) {
            nanos = o.untilNanos() - now;
        } else if (p instanceof HalfOpen h) {
            nanos = h.startNanos() + probeAnswerNanos - now;
        } else {
            nanos = 0;
        }
        return Math.max(1, (nanos + 999) / 1000);
    }

    // ------------------------------------------------------------------------------------------------ closed

    private <T> CompletableFuture<T> closedCall(String operation, Supplier<CompletableFuture<T>> call) {
        if (!timing) {
            return run(call).whenComplete(closedObserver);
        }
        long start = System.nanoTime();
        return run(call).whenComplete((value, error) -> {
            closedCallEnded(value, error);
            report(operation, start, error);
        });
    }

    private void closedCallEnded(Object value, Throwable error) {
        if (error == null) {
            if (failures.get() != 0) {
                failures.set(0);
            }
            return;
        }
        switch (RedisFailures.outcome(error)) {
            case ANSWERED -> failures.set(0);
            case NEUTRAL -> { }
            case UNAVAILABLE -> {
                int n = failures.incrementAndGet();
                if (n >= threshold && phase.get() == CLOSED) {
                    Throwable cause = RedisFailures.unwrap(error);
                    Open open = open(cause, n + " consecutive failed calls");
                    if (phase.compareAndSet(CLOSED, open)) {
                        failures.set(0);
                        log.warn("{}: circuit breaker opened after {} consecutive failed calls; for {} "
                                + "calls fail fast and rules decide by their failure policy", where, n, coolDown, cause);
                        transition(BreakerState.CLOSED, BreakerState.OPEN, n + " consecutive failed calls, the last: "
                                + cause);
                    }
                }
            }
        }
    }

    // ------------------------------------------------------------------------------------------------ open

    private <T> CompletableFuture<T> guardedCall(Phase p, String operation, Supplier<CompletableFuture<T>> call) {
        for (;;) {
            if (p == CLOSED) {
                return closedCall(operation, call);
            }
            long now = ticker.getAsLong();
            if (p instanceof Open o) {
                if (now - o.untilNanos() < 0) {
                    return CompletableFuture.failedFuture(new BreakerOpenException(o.message(), o.cause()));
                }
                HalfOpen probe = halfOpen(now, o.cause());
                if (phase.compareAndSet(o, probe)) {
                    log.info("{}: circuit breaker half-open after its cool-down of {}; one probe call goes "
                            + "through", where, coolDown);
                    transition(BreakerState.OPEN, BreakerState.HALF_OPEN, "cool-down of " + coolDown + " ended");
                    return probe(probe, operation, call);
                }
            } else if (p instanceof HalfOpen h) {
                if (now - h.startNanos() - probeLimitNanos < 0) {
                    return CompletableFuture.failedFuture(new BreakerOpenException(h.message(), h.cause()));
                }
                HalfOpen again = halfOpen(now, h.cause());
                if (phase.compareAndSet(h, again)) {
                    log.warn("{}: the breaker's probe call did not end within {}; probing again", where,
                            Duration.ofNanos(probeLimitNanos));
                    return probe(again, operation, call);
                }
            }
            p = phase.get();
        }
    }

    private <T> CompletableFuture<T> probe(HalfOpen probe, String operation, Supplier<CompletableFuture<T>> call) {
        long start = System.nanoTime();
        return run(call).whenComplete((value, error) -> {
            probeEnded(probe, error);
            if (timing) {
                report(operation, start, error);
            }
        });
    }

    private void probeEnded(HalfOpen probe, Throwable error) {
        switch (RedisFailures.outcome(error)) {
            case ANSWERED -> {
                failures.set(0);
                if (phase.compareAndSet(probe, CLOSED)) {
                    log.info("{}: circuit breaker closed: the probe call was answered; calls go "
                            + "through again", where);
                    transition(BreakerState.HALF_OPEN, BreakerState.CLOSED, "the probe call was answered");
                }
            }
            case UNAVAILABLE -> {
                Throwable cause = RedisFailures.unwrap(error);
                if (phase.compareAndSet(probe, open(cause, "a failed probe call"))) {
                    log.warn("{}: circuit breaker opened again for {}: the probe call failed: {}", where,
                            coolDown, cause.toString());
                    transition(BreakerState.HALF_OPEN, BreakerState.OPEN, "the probe call failed: " + cause);
                }
            }
            case NEUTRAL -> {
                // The probe never reached Redis: nothing learned. Open with the cool-down over: the next call probes.
                Open open = new Open(ticker.getAsLong(), refusal(Instant.now(), "a probe call that did not reach "
                        + "Redis", probe.cause()), probe.cause());
                if (phase.compareAndSet(probe, open)) {
                    log.info("{}: the breaker's probe call failed before it was sent ({}); the next call "
                            + "probes again", where, String.valueOf(error));
                    transition(BreakerState.HALF_OPEN, BreakerState.OPEN, "the probe call did not reach Redis: "
                            + RedisFailures.unwrap(error));
                }
            }
        }
    }

    // ------------------------------------------------------------------------------------------------ helpers

    private Open open(Throwable cause, String after) {
        return new Open(ticker.getAsLong() + coolDownNanos, refusal(Instant.now().plus(coolDown), after, cause),
                cause);
    }

    private String refusal(Instant until, String after, Throwable cause) {
        return where + " is unavailable: circuit breaker open until " + until + " (cool-down "
                + coolDown + " after " + after + "); the call was not sent and charged nothing. Last failure: "
                + cause.getMessage();
    }

    private HalfOpen halfOpen(long now, Throwable cause) {
        Instant answer = Instant.now().plusNanos(probeAnswerNanos);
        return new HalfOpen(now, where + " is unavailable: circuit breaker half-open: one probe call "
                + "is in flight (answered by " + answer + " at the latest) and other calls fail fast until it ends; "
                + "the call was not sent and charged nothing. Last failure: " + cause.getMessage(), cause);
    }

    private static <T> CompletableFuture<T> run(Supplier<CompletableFuture<T>> call) {
        try {
            return call.get();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private void transition(BreakerState from, BreakerState to, String reason) {
        try {
            listener.onBreakerTransition(from, to, reason);
        } catch (RuntimeException e) {
            log.warn("listener {} failed on a breaker transition; ignored", listener, e);
        }
    }

    private void report(String operation, long start, Throwable error) {
        try {
            listener.onStoreCall(operation, System.nanoTime() - start, error);
        } catch (RuntimeException e) {
            log.warn("listener {} failed on a store call; ignored", listener, e);
        }
    }

    @Override
    public String toString() {
        return "CircuitBreaker{" + where + ", " + state() + ", threshold=" + threshold + ", coolDown=" + coolDown + "}";
    }
}
