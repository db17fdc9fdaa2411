package io.sluice.internal.algorithm;

/**
 * One limit's verdict on one request, with the two states a store may commit: {@code admitted} when every
 * limit of the rule admits, {@code rejected} when any limit rejects (usually the unchanged input state; a
 * {@code count_rejected} limit records the attempt there).
 *
 * @param allowed      whether this limit admits the request
 * @param waitMicros   for an admitted reservation, how long the caller must wait before using the permits
 * @param remaining    permits still available right after this decision (never negative)
 * @param retryAfterMicros when rejected, the wait after which the same permits would pass as a try (no wait)
 *                     if nothing else happened; {@link Arith#NEVER} when waiting alone never lets them pass;
 *                     0 when allowed
 * @param resetAfterMicros time until the limit is back to its full, empty state after this decision
 * @param admitted     the state to commit when the whole rule admits (null for a rejecting step)
 * @param rejected     the state to commit when the rule rejects
 * @param lease        the lease granted ({@code concurrency}), or -1
 */
public record Step<S>(boolean allowed, long waitMicros, long remaining, long retryAfterMicros,
                      long resetAfterMicros, S admitted, S rejected, long lease) {

    public static <S> Step<S> allow(long waitMicros, long remaining, long resetAfterMicros, S admitted, S rejected) {
        return new Step<>(true, waitMicros, remaining, 0, resetAfterMicros, admitted, rejected, -1);
    }

    public static <S> Step<S> reject(long remaining, long retryAfterMicros, long resetAfterMicros, S rejected) {
        return new Step<>(false, 0, remaining, retryAfterMicros, resetAfterMicros, null, rejected, -1);
    }
}
