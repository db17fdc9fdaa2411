package io.sluice.internal.algorithm;

import io.sluice.Limit;
import io.sluice.SmoothWarmingUp;

/*
 * smooth_warming_up: Guava's RateLimiter.create(permitsPerSecond, warmupPeriod) (SmoothRateLimiter.
 * SmoothWarmingUp, with Guava's package-private coldFactor exposed), per key. The shared model, the SPI
 * mapping, expiry and the Lua notes are in SmoothAlgorithm; this class fixes the cost curve.
 *
 * Cost curve. Stored permits measure how long the key has been idle, and an idle key is cold: its permits
 * cost MORE than fresh ones. The cost of one permit, as a function of the stored permits it is taken from:
 *
 *   cost per permit
 *        ^
 *   cold +                      /|     coldInterval = coldFactor * stableInterval
 *        |                    /  |
 *        |                  /    |     area of the trapezoid = warmup
 *        |                /      |
 * stable +---------------/       |     area of the rectangle = warmup / 2
 *        |   rectangle   |       |
 *      0 +---------------+-------+----> stored permits
 *        0        threshold    maxPermits
 *
 *   thresholdPermits = 0.5 * warmupMicros / stableInterval
 *   maxPermits       = thresholdPermits + 2.0 * warmupMicros / (stableInterval + coldInterval)
 *   slope            = (coldInterval - stableInterval) / (maxPermits - thresholdPermits)
 *   coolDownInterval = warmupMicros / maxPermits     (an idle key goes from 0 to maxPermits in warmup)
 *
 * Taking k permits from s stored ones costs the area under the curve between s - k and s
 * (storedPermitsToWaitTime): a trapezoid for the part above the threshold, (long)(taken * (cost(top) +
 * cost(bottom)) / 2.0), plus (long)(stableInterval * rest) below it: Guava's two truncations, in Guava's
 * order. Integrals make acquire(3) cost exactly acquire(1) three times (up to those truncations).
 *
 * A new key starts cold, with maxPermits stored (Guava's doSetRate with oldMaxPermits == 0). That is also
 * where every idle key ends, so a full key is exactly a fresh key and expiry is exact here.
 *
 * Worked example (Guava's testWarmUp: 2/s, warmup 4 s, coldFactor 3): stableInterval 500,000 us,
 * coldInterval 1,500,000, threshold 4, maxPermits 8, slope 250,000 us per permit, coolDown 500,000.
 *
 *   request  stored before  cost of its permit (pushes the ticket)               next request waits
 *   1        8              1 * ((500k + 4*250k) + (500k + 3*250k)) / 2 = 1,375,000  R1.38
 *   2        7              (1,250,000 + 1,000,000) / 2 = 1,125,000                  R1.13
 *   3        6              (1,000,000 +   750,000) / 2 =   875,000                  R0.88
 *   4        5              (  750,000 +   500,000) / 2 =   625,000                  R0.63
 *   5        4              below the threshold: 500,000                             R0.50
 *
 * The five costs add up to 4.5 s = warmup (the trapezoid) + 0.5 s (one stable permit). After 4 s idle the
 * key has 8 stored permits again (4,000,000 / 500,000) and the log repeats; after only 2 s it has 4 and
 * serves at the stable rate at once.
 */
final class SmoothWarmingUpAlgorithm extends SmoothAlgorithm {
    private final SmoothWarmingUp limit;
    private final long warmupMicros;
    private final double thresholdPermits;
    private final double slope;

    SmoothWarmingUpAlgorithm(SmoothWarmingUp limit) {
        super(stableIntervalMicros(limit.permitsPerSecond()),
                maxPermits(stableIntervalMicros(limit.permitsPerSecond()), Arith.micros(limit.warmup()),
                        limit.coldFactor()));
        this.limit = limit;
        this.warmupMicros = Arith.micros(limit.warmup());
        double coldIntervalMicros = stableIntervalMicros * limit.coldFactor();
        this.thresholdPermits = 0.5 * warmupMicros / stableIntervalMicros;
        this.slope = (coldIntervalMicros - stableIntervalMicros) / (maxPermits - thresholdPermits);
    }

    /** Guava's doSetRate expressions, in Guava's order. */
    private static double maxPermits(double stableIntervalMicros, long warmupMicros, double coldFactor) {
        double coldIntervalMicros = stableIntervalMicros * coldFactor;
        double thresholdPermits = 0.5 * warmupMicros / stableIntervalMicros;
        return thresholdPermits + 2.0 * warmupMicros / (stableIntervalMicros + coldIntervalMicros);
    }

    @Override
    public Limit limit() {
        return limit;
    }

    @Override
    long storedPermitsToWaitTime(double storedPermits, double permitsToTake) {
        double aboveThreshold = storedPermits - thresholdPermits;
        double rest = permitsToTake;
        long micros = 0;
        if (aboveThreshold > 0.0) {
            double takenAbove = Math.min(aboveThreshold, permitsToTake);
            double length = permitsToTime(aboveThreshold) + permitsToTime(aboveThreshold - takenAbove);
            micros = truncate(takenAbove * length / 2.0);
            rest -= takenAbove;
        }
        return Arith.addSat(micros, truncate(stableIntervalMicros * rest));
    }

    /** The cost of one permit when {@code permitsAboveThreshold} are stored above the threshold. */
    private double permitsToTime(double permitsAboveThreshold) {
        return stableIntervalMicros + permitsAboveThreshold * slope;
    }

    @Override
    double coolDownIntervalMicros() {
        return warmupMicros / maxPermits;
    }

    @Override
    double initialStoredPermits() {
        return maxPermits;
    }

    @Override
    SmoothAlgorithm withLimit(Limit previous) {
        return new SmoothWarmingUpAlgorithm((SmoothWarmingUp) previous);
    }
}
