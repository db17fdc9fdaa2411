package io.sluice.internal.algorithm;

import io.sluice.Limit;
import io.sluice.SmoothBursty;

/*
 * smooth_bursty: Guava's RateLimiter.create(permitsPerSecond) (SmoothRateLimiter.SmoothBursty), per key.
 * The shared model, the SPI mapping, expiry and the Lua notes are in SmoothAlgorithm; this class only fixes
 * the cost curve.
 *
 * Cost curve: flat at zero. Saved permits are free, so an idle key can serve a burst of up to
 *
 *   maxPermits = maxBurstSeconds * permitsPerSecond        (Guava's expression and order)
 *
 * permits at once, and refills at the stable rate: coolDownIntervalMicros = stableIntervalMicros.
 *
 *   cost per permit
 *        ^
 *        |
 *   1/r  +- - - - - - - - - - - -  fresh permits
 *        |
 *      0 +=======================  stored permits (free)
 *        0                 maxPermits
 *
 * Example (Guava's testOneSecondBurst, 5/s, 1 s burst): a key created at 0 and left idle for 2 s has
 * min(5, 2,000,000 / 200,000) = 5 stored permits; acquire(1), acquire(1), acquire(3) take them with no wait
 * and the ticket stays at 2,000,000; acquire(1) then takes one fresh permit, still with no wait (it is the
 * one that pays later) and moves the ticket to 2,200,000, so the next acquire waits 0.20 s.
 *
 * A key without state is one idle long enough to have saved a full burst (SmoothAlgorithm, "Expiry"), not a
 * limiter created at that moment (Guava's doSetRate with oldMaxPermits == 0 stores 0 permits): a key whose
 * state was dropped once it was full must still serve the burst it saved.
 */
final class SmoothBurstyAlgorithm extends SmoothAlgorithm {
    private final SmoothBursty limit;

    SmoothBurstyAlgorithm(SmoothBursty limit) {
        super(stableIntervalMicros(limit.permitsPerSecond()), limit.maxBurstSeconds() * limit.permitsPerSecond());
        this.limit = limit;
    }

    @Override
    public Limit limit() {
        return limit;
    }

    @Override
    long storedPermitsToWaitTime(double storedPermits, double permitsToTake) {
        return 0L;
    }

    @Override
    double coolDownIntervalMicros() {
        return stableIntervalMicros;
    }

    @Override
    double initialStoredPermits() {
        return 0.0;
    }

    @Override
    SmoothAlgorithm withLimit(Limit previous) {
        return new SmoothBurstyAlgorithm((SmoothBursty) previous);
    }
}
