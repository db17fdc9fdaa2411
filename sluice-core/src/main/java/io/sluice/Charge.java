package io.sluice;

/**
 * The answer to {@link RateLimiter#tryCharge}: the decision on the estimate and, when it was admitted, the ticket
 * to settle. Immutable.
 *
 * @param decision the decision on the estimate, as {@link RateLimiter#tryAcquire(String, long)} would report it
 * @param ticket   the ticket to settle when admitted; null when rejected (nothing was charged)
 */
public record Charge(Decision decision, Ticket ticket) {

    /** @throws IllegalArgumentException when the ticket does not match the decision */
    public Charge {
        Checks.notNull(decision, "decision");
        if (decision.allowed() != (ticket != null)) {
            throw new IllegalArgumentException("ticket must be present exactly when the decision is allowed");
        }
    }

    /** Whether the estimate was charged. */
    public boolean allowed() {
        return decision.allowed();
    }
}
