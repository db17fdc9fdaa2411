package io.sluice.internal.algorithm;

/**
 * One limit's state as mutable integers, which an {@link InPlaceStep} reads and overwrites: the memory store
 * keeps one per key so that a decision on a rule of one limit allocates nothing but its {@code Decision}.
 * Which field means what is the algorithm's (token_bucket: tokens, lastRefill, roundingError, refunded; gcra:
 * TAT, refunded).
 *
 * <p>Not thread-safe: the store steps the key's cell (a subclass with a sequence lock of its own) in place holding
 * its write, or steps a private copy and publishes it into the cell.
 */
public class StateCell {

    /** The state's integers, as the algorithm lays them out. */
    long s0;
    long s1;
    long s2;
    /** token_bucket's refund clock (0 unless refunded into). */
    long s3;
    /**
     * {@link Algorithm#expiresAt} of the state held; {@link Long#MIN_VALUE} while the cell holds none (a cell
     * made for a key that had no state, before a step wrote one).
     */
    long expiresAt = Long.MIN_VALUE;

    /**
     * Records that a step wrote a state expiring at {@code expiresAt}; a state written already expired at
     * {@code now} leaves the cell holding none, as the store keeps no such state (the Redis script deletes its
     * key), so a clock that steps back cannot find it again.
     */
    final void wrote(long expiresAt, long now) {
        this.expiresAt = now < expiresAt ? expiresAt : Long.MIN_VALUE;
    }

    /** When the state held means the same as no state (see {@link #expiresAt}). */
    public final long expiresAt() {
        return expiresAt;
    }

    /** Whether a state was ever written into this cell. */
    public final boolean holdsState() {
        return expiresAt != Long.MIN_VALUE;
    }

    /** Overwrites this cell's integers and expiry with {@code from}'s. */
    public final void copyFrom(StateCell from) {
        s0 = from.s0;
        s1 = from.s1;
        s2 = from.s2;
        s3 = from.s3;
        expiresAt = from.expiresAt;
    }

    /**
     * Whether this cell holds what {@code other} holds, integer for integer, expiry included: a step that leaves
     * its copy so has nothing to write, whether it wrote nothing or wrote the same state again.
     */
    public final boolean sameAs(StateCell other) {
        return s0 == other.s0 && s1 == other.s1 && s2 == other.s2 && s3 == other.s3
                && expiresAt == other.expiresAt;
    }
}
