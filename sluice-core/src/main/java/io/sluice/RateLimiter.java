package io.sluice;

import io.sluice.internal.DefaultRateLimiter;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * The facade: decides requests for keys under one {@link Rule}, in whatever {@link Store} holds the state.
 *
 * <pre>{@code
 * RateLimiter limiter = RateLimiter.builder(
 *         Rule.of("partner_api", SlidingLog.of(30, Duration.ofMinutes(1))))
 *     .build();                                   // in-memory store, system clock
 * Decision d = limiter.tryAcquire("user:42");
 * if (!d.allowed()) respond429(d.retryAfterSeconds());
 * }</pre>
 *
 * <p><b>Thread safety:</b> all methods may be called from any thread. <b>Consistency:</b> each decision is
 * atomic across all limits of the rule (all charged or none), and decisions on one key are linearizable in
 * the store. <b>Failure:</b> decisions never throw for a valid request; an invalid argument throws
 * {@link IllegalArgumentException} naming it before anything is charged; store failures surface as the
 * store documents.
 *
 * <p>Keys are non-empty strings of at most 512 characters, well-formed Unicode (no unpaired surrogate: see
 * {@link Text}, which says why ill-formed keys are refused rather than repaired). Permits are at least 1 (0 is allowed for
 * {@link #peek}) and at most {@link Rule#maxPermits()} for all-or-nothing operations.
 */
public interface RateLimiter extends AutoCloseable {

    /** A builder for a limiter enforcing {@code rule}. */
    static Builder builder(Rule rule) {
        return new Builder(rule);
    }

    /** The rule in force (changes with {@link #updateLimit}). */
    Rule rule();

    /** {@code tryAcquire(key, 1)}. */
    default Decision tryAcquire(String key) {
        return tryAcquire(key, 1);
    }

    /** Takes {@code permits} now if every limit allows, else nothing; never waits. */
    Decision tryAcquire(String key, long permits);

    /**
     * Takes {@code permits} from each of {@code keys} now if every limit allows it on every key, else from none
     * (all or nothing across the keys, in one store call: {@link Store#decideTogether}). The decision reports
     * the keys' limits as one rule of all of them would; the listener hears it once per key.
     *
     * @throws IllegalArgumentException for no key, an invalid or repeated key, or permits out of range
     * @throws UnsupportedOperationException when the store cannot decide several keys together
     */
    Decision tryAcquireAll(java.util.List<String> keys, long permits);

    /**
     * Takes as many of {@code permits} as every limit allows now, possibly fewer (best-effort, as Istio's
     * redisquota); rejected only when none can be granted. {@code permits} may exceed {@link Rule#maxPermits()}.
     */
    Decision tryAcquireAtMost(String key, long permits);

    /**
     * Takes {@code permits}, waiting up to {@code maxWait}. Limits that can reserve (token bucket, GCRA,
     * leaky bucket, Guava's smooth limiters, refresh period) charge now and the call sleeps the reservation's
     * wait; the window and concurrency limits are polled: the call sleeps their retry-after and asks again.
     * When the wait would exceed {@code maxWait} it returns the rejection at once and reserves nothing.
     *
     * @return the decision; when allowed, its wait has been slept
     * @throws InterruptedException if interrupted while sleeping; a reservation already made stays charged
     */
    Decision acquire(String key, long permits, Duration maxWait) throws InterruptedException;

    /**
     * {@link #acquire(String, long, Duration)} with the rule's default maximum wait: the smallest
     * {@code timeout} of its {@link RefreshPeriod} limits (Resilience4j's {@code timeoutDuration}), or
     * unbounded when it has none.
     */
    Decision acquire(String key, long permits) throws InterruptedException;

    /**
     * Reserves {@code permits} with a wait of at most {@code maxWait} and returns at once: the caller delays
     * its work by {@link Decision#waitMicros()} itself. Limits that cannot reserve decide for now.
     */
    Decision reserve(String key, long permits, Duration maxWait);

    /** What {@link #tryAcquire(String, long)} would decide now; charges nothing. {@code permits} may be 0. */
    Decision peek(String key, long permits);

    /** Returns a lease granted by the rule's {@link Concurrency} limit; false if unknown or expired. */
    boolean release(String key, long lease);

    /**
     * Charges an estimate now, to settle when the real cost is known (an LLM call's tokens, a download's bytes):
     * all or nothing as {@link #tryAcquire(String, long)}, and when admitted the returned {@link Charge} holds a
     * {@link Ticket} for {@link #settle}. A ticket not settled within {@link Ticket#DEFAULT_LIFETIME} stays
     * charged at its estimate. Not Guava's or Bucket4j's {@code reserve} (admit with a wait: {@link #reserve});
     * see docs/reference/settle.md.
     *
     * @throws IllegalArgumentException for an invalid key or an estimate out of range
     * @throws UnsupportedOperationException when the store or an algorithm of the rule cannot refund (the
     *                                       message names the limit)
     */
    default Charge tryCharge(String key, long estimate) {
        return tryCharge(key, estimate, Ticket.DEFAULT_LIFETIME);
    }

    /** {@link #tryCharge(String, long)} with a ticket that lives {@code lifetime} (1 ms to 1 day). */
    Charge tryCharge(String key, long estimate, java.time.Duration lifetime);

    /** {@link #tryCharge(String, long, java.time.Duration)} without blocking the caller on a remote store. */
    CompletableFuture<Charge> tryChargeAsync(String key, long estimate, java.time.Duration lifetime);

    /**
     * Settles a ticket at its actual cost: more than the estimate charges the difference (even past the limit:
     * the key owes it, nothing more is admitted), less refunds the rest into the windows or buckets that were
     * charged, where they still count. Idempotent: a ticket settles once; settling it again, or after it
     * expired, changes nothing and says so ({@link Settlement#settled()} false).
     *
     * @throws IllegalArgumentException for a null ticket or {@code actual} out of [0, {@link Limit#MAX_COUNT}]
     */
    Settlement settle(Ticket ticket, long actual);

    /** {@link #settle} without blocking the caller on a remote store. */
    CompletableFuture<Settlement> settleAsync(Ticket ticket, long actual);

    /** Forgets the key's state in every limit of the rule. */
    void reset(String key);

    /**
     * Replaces the rule's limit of the same name on this live limiter, keeping each key's state as that
     * limit's algorithm documents (e.g. {@link SmoothBursty} behaves as Guava's {@code setRate}); a limit of
     * another algorithm starts fresh.
     *
     * @throws IllegalArgumentException when the rule has no limit of that name
     */
    void updateLimit(Limit limit);

    /** {@link #tryAcquire(String, long)} without blocking the caller on a remote store. */
    CompletableFuture<Decision> tryAcquireAsync(String key, long permits);

    /**
     * {@link #tryAcquireAll} without blocking the caller on a remote store ({@link Store#decideTogetherAsync}).
     * A bad argument throws at once, as {@link #tryAcquireAll} does.
     */
    CompletableFuture<Decision> tryAcquireAllAsync(java.util.List<String> keys, long permits);

    /** {@link #tryAcquireAtMost} without blocking the caller on a remote store. */
    CompletableFuture<Decision> tryAcquireAtMostAsync(String key, long permits);

    /** {@link #reserve} without blocking the caller on a remote store. */
    CompletableFuture<Decision> reserveAsync(String key, long permits, Duration maxWait);

    /**
     * {@link #acquire(String, long, Duration)} without blocking any thread: the future completes when the wait
     * is over (scheduled on {@link CompletableFuture#delayedExecutor}, i.e. in real time).
     */
    CompletableFuture<Decision> acquireAsync(String key, long permits, Duration maxWait);

    /** {@link #peek} without blocking the caller on a remote store. */
    CompletableFuture<Decision> peekAsync(String key, long permits);

    /** {@link #release} without blocking the caller on a remote store. */
    CompletableFuture<Boolean> releaseAsync(String key, long lease);

    /** Closes the store if this limiter created it; a store passed to the builder is left open. */
    @Override
    void close();

    /** Configures a {@link RateLimiter}; defaults: a new in-memory store, {@link Sleeper#system()}. */
    final class Builder {
        private final Rule rule;
        private Store store;
        private Sleeper sleeper = Sleeper.system();
        private SluiceListener listener = SluiceListener.NONE;

        Builder(Rule rule) {
            this.rule = Checks.notNull(rule, "rule");
        }

        /** The store; default a new {@link Store#memory()} store with the system clock, closed with the limiter. */
        public Builder store(Store store) {
            this.store = Checks.notNull(store, "store");
            return this;
        }

        /** How {@link #acquire} waits; default {@link Sleeper#system()}. */
        public Builder sleeper(Sleeper sleeper) {
            this.sleeper = Checks.notNull(sleeper, "sleeper");
            return this;
        }

        /**
         * Told of every decision and its key ({@link SluiceListener#onDecision(Rule, String, Decision)}); default
         * {@link SluiceListener#NONE}.
         */
        public Builder listener(SluiceListener listener) {
            this.listener = Checks.notNull(listener, "listener");
            return this;
        }

        public RateLimiter build() {
            boolean owned = store == null;
            return new DefaultRateLimiter(rule, owned ? Store.memory().build() : store, owned, sleeper, listener);
        }
    }

    /** Validates a key as every operation does; exposed for stores and servers that accept keys. */
    static String checkKey(String key) {
        return Checks.key(key);
    }
}
