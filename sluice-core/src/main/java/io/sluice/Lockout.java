package io.sluice;

import java.time.Duration;

/**
 * A rule's lockout ({@link Rule#withLockout}): after {@code after} rejections of one key within {@code within},
 * the key is locked out for {@code duration}. The login form's "slow down guessing": a limit of 5 attempts a
 * minute, and after 3 rejections within 15 minutes no attempt at all for an hour. As fail2ban's
 * {@code maxretry}, {@code findtime} and {@code bantime}, or rate-limiter-flexible's {@code blockDuration}.
 *
 * <p>What counts: a try, best-effort or reservation that the rule's limits reject (a shadow limit never
 * rejects, a peek never counts, an admitted request does not clear the count). The window of {@code within}
 * opens at the first rejection counted: the key is locked out when the {@code after}-th rejection comes less
 * than {@code within} after that first one; otherwise counting starts again at that rejection.
 *
 * <p>While locked out, every decision is rejected with {@link Decision#lockedOut()} true, limit
 * {@link #NAME}, and a retry-after of the time left in the lockout (the rejection that starts it
 * says the whole {@code duration}). The limits are not asked, so nothing is charged, and a request during the
 * lockout neither counts nor extends it (as fail2ban: the lockout ends {@code duration} after it began).
 * Counting starts afresh when it ends. {@code RateLimiter.reset} lifts the lockout and clears the count.
 * {@code RateLimiter.acquire} returns a lockout at once rather than sleeping through it (each of its rejected
 * polls counts as a rejection).
 *
 * @param after    rejections that lock the key out, in [1, {@link Limit#MAX_COUNT}]
 * @param within   the period they must fall in, counted from the first, whole microseconds in [1 µs, 366 days]
 * @param duration how long the key is locked out, whole microseconds in [1 µs, 366 days] (the rule file's
 *                 {@code for})
 */
public record Lockout(long after, Duration within, Duration duration) {

    /** The limit name of a decision the lockout made ({@link Decision#limit()}). */
    public static final String NAME = "lockout";

    /** @throws IllegalArgumentException naming the invalid field and its accepted range */
    public Lockout {
        Checks.count(after, "lockout.after");
        Checks.micros(within, "lockout.within");
        Checks.micros(duration, "lockout.for");
    }

    /** After {@code after} rejections within {@code within}, locked out for {@code duration}. */
    public static Lockout of(long after, Duration within, Duration duration) {
        return new Lockout(after, within, duration);
    }

    /** {@link #within()} in microseconds. */
    public long withinMicros() {
        return within.toNanos() / 1_000;
    }

    /** {@link #duration()} in microseconds. */
    public long durationMicros() {
        return duration.toNanos() / 1_000;
    }

    /**
     * Whether {@code decision} is one that locked its key out: a lockout decision whose retry-after is this
     * lockout's whole duration, which only a decision made in the microsecond the lockout began can say (later
     * ones say the time left). For counting lockouts (the {@code sluice.limiter.lockouts} meter): a request of
     * the same key in that same microsecond says it too, and counts again.
     */
    public boolean began(Decision decision) {
        return decision.lockedOut() && decision.retryAfterMicros() == durationMicros();
    }
}
