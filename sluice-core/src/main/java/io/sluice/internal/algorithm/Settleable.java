package io.sluice.internal.algorithm;

/**
 * A limit whose charges can be settled after the fact ({@code RateLimiter.tryCharge} then {@code settle}): the
 * transition that charges the difference between the actual cost and the estimate, or refunds it. Implemented
 * next to each algorithm's {@link Algorithm#step} where a refund is sound, with the derivation in that class;
 * the algorithms that do not implement it refuse tickets (docs/reference/settle.md says why, per algorithm).
 *
 * <p>Soundness, the property every implementation keeps: after a charge of {@code estimate} at time t0 and its
 * settlement at {@code actual}, the limit never admits more over any window than it would had {@code actual}
 * been charged at t0 (a refund only gives back what the charge took, and only where it still counts), and an
 * extra charge only ever lowers what is admitted later.
 *
 * @param <S> the algorithm's state type
 */
public interface Settleable<S> {

    /**
     * Where an admitted charge at {@code now} went, recorded in the ticket: the start (or end) of the window
     * charged, or the charge's time; 0 for an algorithm that needs nothing. {@code admitted} is the state the
     * charge committed.
     */
    long mark(S admitted, long now);

    /**
     * The state after settling, at {@code now}, a charge of {@code estimate} recorded at {@code mark} at its
     * {@code actual} cost. {@code actual > estimate}: the difference is charged now, unconditionally (the state
     * may go past the limit: the key is in debt). {@code actual < estimate}: the difference is given back to
     * what the charge took, as far as it still counts. Equal: the state unchanged. Never reads a clock.
     */
    S settle(S state, long now, long mark, long estimate, long actual);
}
