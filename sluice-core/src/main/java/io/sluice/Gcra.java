package io.sluice;

import java.time.Duration;

/**
 * {@code gcra}: the generic cell rate algorithm as go-redis/redis_rate implements it: {@code limit} per
 * {@code period} with a burst of {@code burst}.
 *
 * <p>The state is one timestamp, the theoretical arrival time (TAT). A request of {@code n} is admitted when
 * {@code max(TAT, now) + n·T − burst·T ≤ now}, where the emission interval {@code T = period / limit}.
 * Guarantee: at most {@code burst + limit × t / period} admitted in any interval {@code t} — the same meter as
 * a leaky bucket, with exact retry-after. Time is integer microseconds and {@code T} is rounded up to a whole
 * microsecond (exact when {@code period} in µs is a multiple of {@code limit}; otherwise the rate is lower by
 * less than 1 µs per permit), so {@code remaining} is exact rather than float-rounded as in redis_rate.
 * Memory: one integer per key.
 *
 * <p>Changing parameters keeps the TAT; the new emission interval and burst judge it at once.
 *
 * @param name   default {@code "gcra"}
 * @param limit  permits per period, in [1, {@link Limit#MAX_COUNT}], with {@code period/limit ≥ 1 µs}
 * @param period the period, whole microseconds in [1 µs, 366 days]
 * @param burst  most permits admitted at once, in [1, {@link Limit#MAX_COUNT}]; default {@code limit}
 */
public record Gcra(String name, long limit, Duration period, long burst) implements Limit {

    /** @throws IllegalArgumentException naming the invalid field and its accepted range */
    public Gcra {
        Checks.name(name, "name");
        Checks.count(limit, "limit");
        long p = Checks.micros(period, "period");
        Checks.count(burst, "burst");
        if (limit > p) {
            throw new IllegalArgumentException("limit must be in [1, " + p + "] (at most one permit per microsecond"
                    + " of period=" + period + "), was " + limit);
        }
        if (burst > (1L << 53) / ((p + limit - 1) / limit)) {
            throw new IllegalArgumentException("burst must keep burst*period/limit <= 2^53 us, was " + burst);
        }
    }

    /** {@code limit} per {@code period} with a burst of {@code limit} (redis_rate's {@code PerSecond} etc.). */
    public static Gcra of(long limit, Duration period) {
        return new Gcra(AlgorithmName.GCRA.text(), limit, period, limit);
    }

    @Override
    public String algorithm() {
        return AlgorithmName.GCRA.text();
    }

    @Override
    public long maxPermits() {
        return burst;
    }

    @Override
    public Gcra named(String name) {
        return new Gcra(name, limit, period, burst);
    }

    public Gcra withLimit(long limit, Duration period) {
        return new Gcra(name, limit, period, burst);
    }

    public Gcra withBurst(long burst) {
        return new Gcra(name, limit, period, burst);
    }
}
