package io.sluice;

/**
 * The outcome of {@link RateLimiter#settle}: whether this call settled the ticket, and with what. Immutable.
 *
 * <p>A ticket settles once. A second settlement of the same ticket (a retry after a timeout, a replay after a
 * reconnect), or one after the ticket expired (it then stays charged at its estimate), finds no ticket and
 * changes nothing: {@link #settled()} is false.
 *
 * @param settled  whether this call found the ticket and applied the difference
 * @param estimate the permits the ticket had charged (0 when not settled)
 * @param actual   the actual cost applied (0 when not settled)
 */
public record Settlement(boolean settled, long estimate, long actual) {

    private static final Settlement UNKNOWN = new Settlement(false, 0, 0);

    /** The answer for a ticket that is not (or no longer) held: nothing changed. */
    public static Settlement unknown() {
        return UNKNOWN;
    }

    /** Permits given back: {@code estimate − actual} when the estimate was too high, else 0. */
    public long refunded() {
        return Math.max(0, estimate - actual);
    }

    /** Permits charged on top of the estimate: {@code actual − estimate} when it was too low, else 0. */
    public long extra() {
        return Math.max(0, actual - estimate);
    }
}
