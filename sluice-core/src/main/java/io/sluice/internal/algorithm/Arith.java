package io.sluice.internal.algorithm;

import java.math.BigInteger;
import java.time.Duration;

/**
 * Exact integer helpers for the transitions. Every algorithm keeps intermediates exact; where a product of a
 * count and a duration could pass 2^63 these compute it without overflow.
 */
public final class Arith {

    /**
     * Latest time a store may pass to an algorithm: 2^53 µs (year 2255), the largest integer IEEE doubles
     * (Lua numbers) hold exactly. Stores reject clock readings outside [0, MAX_TIME].
     */
    public static final long MAX_TIME = 1L << 53;

    /** A duration or instant beyond {@link #MAX_TIME}: "never". */
    public static final long NEVER = Long.MAX_VALUE;

    private Arith() {}

    public static long micros(Duration d) {
        return d.toNanos() / 1_000;
    }

    /** {@code a + b}, saturated at {@link Long#MAX_VALUE} / {@link Long#MIN_VALUE}. */
    public static long addSat(long a, long b) {
        long r = a + b;
        if (((a ^ r) & (b ^ r)) < 0) {
            return a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
        return r;
    }

    /** {@code a * b}, saturated at {@link Long#MAX_VALUE} for non-negative arguments. */
    public static long mulSat(long a, long b) {
        long hi = Math.multiplyHigh(a, b);
        long lo = a * b;
        if ((hi == 0 && lo >= 0) || (hi == -1 && lo < 0)) {
            return lo;
        }
        return (a < 0) == (b < 0) ? Long.MAX_VALUE : Long.MIN_VALUE;
    }

    /** {@code floor(a * b / c)} for {@code a, b >= 0, c > 0}, exact; saturated at {@link Long#MAX_VALUE}. */
    public static long mulDivFloor(long a, long b, long c) {
        long hi = Math.multiplyHigh(a, b);
        long lo = a * b;
        if (hi == 0 && lo >= 0) {
            return lo / c;
        }
        BigInteger r = BigInteger.valueOf(a).multiply(BigInteger.valueOf(b)).divide(BigInteger.valueOf(c));
        return r.bitLength() < 64 ? r.longValue() : Long.MAX_VALUE;
    }

    /** {@code ceil(a * b / c)} for {@code a, b >= 0, c > 0}, exact; saturated at {@link Long#MAX_VALUE}. */
    public static long mulDivCeil(long a, long b, long c) {
        long hi = Math.multiplyHigh(a, b);
        long lo = a * b;
        if (hi == 0 && lo >= 0) {
            return ceilDiv(lo, c);
        }
        BigInteger[] qr = BigInteger.valueOf(a).multiply(BigInteger.valueOf(b)).divideAndRemainder(BigInteger.valueOf(c));
        BigInteger r = qr[1].signum() > 0 ? qr[0].add(BigInteger.ONE) : qr[0];
        return r.bitLength() < 64 ? r.longValue() : Long.MAX_VALUE;
    }

    /** {@code ceil(a / b)} for {@code a >= 0, b > 0}. */
    public static long ceilDiv(long a, long b) {
        return a / b + (a % b == 0 ? 0 : 1);
    }

    /** {@code floor(a / b)} for any sign of {@code a}, {@code b > 0}. */
    public static long floorDiv(long a, long b) {
        return Math.floorDiv(a, b);
    }
}
