package io.sluice;

import java.time.Duration;

/**
 * {@code concurrency}: at most {@code maxConcurrent} permits in flight per key, each held by a lease
 * (Stripe's concurrent-request limiter).
 *
 * <p>An admitted request gets a lease id ({@link Decision#lease()}); {@link RateLimiter#release} returns its
 * permits. A lease that is never released (the holder crashed) expires {@code leaseTtl} after it was
 * granted, so a crash costs capacity for one TTL at most. Memory: one entry per lease in flight. A rule may
 * hold at most one concurrency limit.
 *
 * <p>Changing {@code maxConcurrent} keeps the leases in flight (a lower maximum admits nothing until enough
 * are released); changing {@code leaseTtl} applies to new leases.
 *
 * @param name          default {@code "concurrency"}
 * @param maxConcurrent permits in flight, in [1, {@value #MAX_LEASES}]
 * @param leaseTtl      lease lifetime, whole microseconds in [1 µs, 366 days]
 */
public record Concurrency(String name, long maxConcurrent, Duration leaseTtl) implements Limit {

    /** Largest {@code maxConcurrent}: bounds the leases kept per key. */
    public static final long MAX_LEASES = 1_000_000;

    /** @throws IllegalArgumentException naming the invalid field and its accepted range */
    public Concurrency {
        Checks.name(name, "name");
        Checks.count(maxConcurrent, "max_concurrent", 1, MAX_LEASES);
        Checks.micros(leaseTtl, "lease_ttl");
    }

    public static Concurrency of(long maxConcurrent, Duration leaseTtl) {
        return new Concurrency(AlgorithmName.CONCURRENCY.text(), maxConcurrent, leaseTtl);
    }

    @Override
    public String algorithm() {
        return AlgorithmName.CONCURRENCY.text();
    }

    @Override
    public long maxPermits() {
        return maxConcurrent;
    }

    @Override
    public Concurrency named(String name) {
        return new Concurrency(name, maxConcurrent, leaseTtl);
    }

    public Concurrency withMaxConcurrent(long maxConcurrent) {
        return new Concurrency(name, maxConcurrent, leaseTtl);
    }

    public Concurrency withLeaseTtl(Duration leaseTtl) {
        return new Concurrency(name, maxConcurrent, leaseTtl);
    }
}
