package io.sluice;

/**
 * One request to a store: what to do, for how many permits, and how long a reservation may wait. Built by
 * {@link RateLimiter}; public for {@link Store} implementations. Immutable.
 *
 * @param op            the operation
 * @param permits       permits asked for: at least 1, or 0 for a {@link Op#PEEK} that only inspects
 * @param maxWaitMicros for {@link Op#RESERVE}: the longest wait accepted ({@link Long#MAX_VALUE}: unbounded);
 *                      0 for the other operations
 */
public record Request(Op op, long permits, long maxWaitMicros) {

    /** What a request asks a store to do. */
    public enum Op {
        /** All or nothing, usable now. */
        TRY,
        /** As many as possible up to {@code permits}, usable now (best-effort partial grant). */
        TRY_AT_MOST,
        /** All or nothing; limits that can reserve may admit with a wait up to {@code maxWaitMicros}. */
        RESERVE,
        /** What {@link #TRY} would decide now; charges nothing. */
        PEEK
    }

    /** @throws IllegalArgumentException naming the invalid field */
    public Request {
        Checks.notNull(op, "op");
        if (permits < 0 || (permits == 0 && op != Op.PEEK)) {
            throw new IllegalArgumentException("permits must be in [" + (op == Op.PEEK ? 0 : 1) + ", "
                    + Limit.MAX_COUNT + "], was " + permits);
        }
        if (maxWaitMicros < 0 || (maxWaitMicros != 0 && op != Op.RESERVE)) {
            throw new IllegalArgumentException("maxWaitMicros must be 0 for " + op + " and >= 0 for RESERVE, was "
                    + maxWaitMicros);
        }
    }

    /** The most common request, shared: records are immutable, and the hot path allocates less. */
    private static final Request TRY_ONE = new Request(Op.TRY, 1, 0);

    public static Request tryAcquire(long permits) {
        return permits == 1 ? TRY_ONE : new Request(Op.TRY, permits, 0);
    }

    public static Request tryAcquireAtMost(long permits) {
        return new Request(Op.TRY_AT_MOST, permits, 0);
    }

    public static Request reserve(long permits, long maxWaitMicros) {
        return new Request(Op.RESERVE, permits, maxWaitMicros);
    }

    public static Request peek(long permits) {
        return new Request(Op.PEEK, permits, 0);
    }
}
