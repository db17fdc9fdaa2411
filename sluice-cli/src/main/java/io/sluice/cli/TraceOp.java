package io.sluice.cli;

import java.util.Locale;

/** What one trace line asks for; the names are the trace's {@code op} values. */
enum TraceOp {
    /** {@code RateLimiter.tryAcquire}: all or nothing, now. */
    TRY,
    /** {@code RateLimiter.tryAcquireAtMost}: as many as every limit allows now. */
    TRY_AT_MOST,
    /** {@code RateLimiter.reserve}: admitted with a wait, which the output reports instead of sleeping it. */
    ACQUIRE,
    /** {@code RateLimiter.peek}: what {@code try} would decide, charging nothing. */
    PEEK,
    /** {@code RateLimiter.release}: returns a concurrency lease. */
    RELEASE,
    /** {@code RateLimiter.reset}: forgets the key. */
    RESET,
    /** {@code RateLimiter.updateLimit} on every rule that uses the limit. */
    SET_LIMIT,
    /**
     * {@code Store.decideTogether}: several (rule, key) targets tried all or nothing, now
     * ({@code RateLimiter.tryAcquireAll} when they share one rule).
     */
    TRY_ALL,
    /**
     * {@code RateLimiter.tryCharge}: an estimate charged all or nothing, now; when admitted, its ticket is kept
     * under the name the trace gives it, for a later {@link #SETTLE}.
     */
    CHARGE,
    /** {@code RateLimiter.settle}: the ticket the trace names settled at its actual cost. */
    SETTLE;

    /** The name in traces, e.g. {@code try_at_most}. */
    String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Whether this op is decided like a request (output: a decision). */
    boolean decides() {
        return this == TRY || this == TRY_AT_MOST || this == ACQUIRE || this == PEEK || this == TRY_ALL
                || this == CHARGE;
    }

    /** Whether this op can charge permits (counted in the summary and the chart). */
    boolean charges() {
        return this == TRY || this == TRY_AT_MOST || this == ACQUIRE || this == TRY_ALL || this == CHARGE;
    }

    /** The op with this trace name, or null. */
    static TraceOp byWireName(String name) {
        for (TraceOp op : values()) {
            if (op.wireName().equals(name)) {
                return op;
            }
        }
        return null;
    }
}
