package io.sluice;

import java.time.Duration;

/**
 * {@code token_bucket}: Bucket4j's bandwidth: a bucket of {@code capacity} tokens refilled with
 * {@code refillTokens} every {@code refillPeriod}, in one of Bucket4j's three refill styles.
 *
 * <p>Guarantee: never more than {@code capacity} tokens in the bucket, so at most
 * {@code capacity + refillTokens × t / refillPeriod} permits in any interval {@code t} (greedy). Reservations
 * ({@link RateLimiter#reserve}, {@link RateLimiter#acquire}) take tokens the bucket does not have yet and
 * report the wait until they are refilled, as Bucket4j's {@code tryConsumeAndReturnRemaining}/blocking API
 * does. Memory: three integers per key.
 *
 * <p>The refill rate {@code refillTokens / refillPeriod} is kept as a reduced fraction and must satisfy
 * {@code refillTokens' × refillPeriod'µs ≤ 2^53} after reduction (exact arithmetic in Redis Lua too); for
 * example 1,000,000 per day reduces to 1 per 86.4 ms and is fine.
 *
 * <p>Changing parameters keeps the current tokens, capped at the new capacity (Bucket4j's
 * {@code TokensInheritanceStrategy.AS_IS}); the refill continues from the last refill time. The partial token
 * of a greedy refill is kept only when the reduced rate stays the same (otherwise less than one token is
 * lost); switching to {@link Refill#INTERVAL_ALIGNED} joins the epoch grid at the current period.
 *
 * <p>A key's state is dropped once its bucket is full again, when it means the same as a new key. With
 * {@code initialTokens < capacity} a full bucket admits more than a new key, so the state is kept (Redis:
 * until the end of Sluice's clock; the in-memory store: until {@code maxKeys} evicts it): a key idle until
 * full comes back full, as Bucket4j's bucket does, and only a key never seen starts with
 * {@code initialTokens}. Its first decision creates the bucket even when it rejects, so a bucket starting
 * below the permits asked (for example at 0) refills from then on and admits once they are there.
 *
 * @param name          default {@code "token_bucket"}
 * @param capacity      most tokens the bucket holds, in [1, {@link Limit#MAX_COUNT}]
 * @param refillTokens  tokens added per period, in [1, {@link Limit#MAX_COUNT}]
 * @param refillPeriod  the refill period, whole microseconds in [1 µs, 366 days]
 * @param refill        the refill style; default {@link Refill#GREEDY}
 * @param initialTokens tokens of a key seen for the first time, in [0, capacity]; default {@code capacity}
 */
public record TokenBucket(String name, long capacity, long refillTokens, Duration refillPeriod, Refill refill,
                          long initialTokens) implements Limit {

    /** Bucket4j's refill styles. */
    public enum Refill {
        /** Tokens trickle in continuously: {@code refillTokens} per period spread evenly (Bucket4j {@code refillGreedy}). */
        GREEDY,
        /** All {@code refillTokens} arrive at once when a whole period has passed since the previous refill
         * (Bucket4j {@code refillIntervally}); periods are counted from the key's first request, and from the
         * first request after the bucket was full (a full bucket forgets its phase, like a new key). */
        INTERVAL,
        /** As {@link #INTERVAL}, but periods are aligned to the Unix epoch (Bucket4j
         * {@code refillIntervallyAligned} with the first refill at a multiple of the period since 1970). */
        INTERVAL_ALIGNED
    }

    /** @throws IllegalArgumentException naming the invalid field and its accepted range */
    public TokenBucket {
        Checks.name(name, "name");
        Checks.count(capacity, "capacity");
        Checks.count(refillTokens, "refill_tokens");
        long period = Checks.micros(refillPeriod, "refill_period");
        Checks.notNull(refill, "refill");
        Checks.count(initialTokens, "initial_tokens", 0, capacity);
        long g = gcd(refillTokens, period);
        if (refillTokens / g > (1L << 53) / (period / g)) {
            throw new IllegalArgumentException("refill_tokens/refill_period must reduce to a fraction a/b with "
                    + "a*b <= 2^53 (a = tokens, b = microseconds), was " + refillTokens + "/" + refillPeriod);
        }
    }

    /** A full bucket of {@code capacity} refilled greedily by {@code refillTokens} per {@code refillPeriod}. */
    public static TokenBucket of(long capacity, long refillTokens, Duration refillPeriod) {
        return new TokenBucket(AlgorithmName.TOKEN_BUCKET.text(), capacity, refillTokens, refillPeriod, Refill.GREEDY, capacity);
    }

    static long gcd(long a, long b) {
        while (b != 0) {
            long t = a % b;
            a = b;
            b = t;
        }
        return a;
    }

    @Override
    public String algorithm() {
        return AlgorithmName.TOKEN_BUCKET.text();
    }

    @Override
    public long maxPermits() {
        return capacity;
    }

    @Override
    public TokenBucket named(String name) {
        return new TokenBucket(name, capacity, refillTokens, refillPeriod, refill, initialTokens);
    }

    /** A copy with another capacity; initial tokens follow a full bucket when they were full before. */
    public TokenBucket withCapacity(long capacity) {
        long initial = initialTokens == this.capacity ? capacity : initialTokens;
        return new TokenBucket(name, capacity, refillTokens, refillPeriod, refill, initial);
    }

    public TokenBucket withRefill(long refillTokens, Duration refillPeriod) {
        return new TokenBucket(name, capacity, refillTokens, refillPeriod, refill, initialTokens);
    }

    public TokenBucket withRefill(Refill refill) {
        return new TokenBucket(name, capacity, refillTokens, refillPeriod, refill, initialTokens);
    }

    public TokenBucket withInitialTokens(long initialTokens) {
        return new TokenBucket(name, capacity, refillTokens, refillPeriod, refill, initialTokens);
    }
}
