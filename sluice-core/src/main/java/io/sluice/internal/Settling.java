package io.sluice.internal;

import io.sluice.AlgorithmName;
import io.sluice.Limit;
import io.sluice.Rule;

/**
 * Which algorithms can settle a ticket ({@code RateLimiter.tryCharge}, {@code settle}), and why the others
 * cannot: one table for every store, so the in-memory and Redis stores refuse the same rules with the same words.
 */
public final class Settling {

    private Settling() {}

    /** Why {@code name} cannot settle a ticket; null when it can. */
    public static String why(AlgorithmName name) {
        return switch (name) {
            // gcra and token_bucket settle with a refund clock (GcraAlgorithm's settlement derives it for any
            // number of tickets; TokenBucketAlgorithm's carries it over to the refill styles).
            case FIXED_WINDOW, CALENDAR_WINDOW, SLIDING_WINDOW, ROLLING_WINDOW, SLIDING_LOG, GCRA, TOKEN_BUCKET -> null;
            // LeakyBucketAlgorithm.settle exists with the mark gcra had before its refund clock; a random run found
            // a refund admitting one permit past the proved bound (SettlePropertiesTest, disabled).
            case LEAKY_BUCKET -> "a refund into nginx's queue needs a refund clock in its state, as gcra has, and a"
                    + " proof that survives nginx's rounding of the leak (docs/reference/settle.md)";
            case SMOOTH_BURSTY, SMOOTH_WARMING_UP -> "Guava's stored permits and next free ticket cannot give back"
                    + " a charge already turned into a wait (and smooth_warming_up's cold interval depends on them)";
            case REFRESH_PERIOD -> "its cycles reserve permits of future cycles, so a refund cannot tell which cycle"
                    + " the charge went to";
            case CONCURRENCY -> "it counts permits in flight, not a rate: return them with release(lease)";
        };
    }

    /**
     * The refusal of a charge whose ticket id is still open for the same rule and key: the same words from every
     * store (the in-memory store's {@code TicketBook}, the Redis store's {@code settle.lua}).
     */
    public static IllegalArgumentException alreadyOpen(String rule, String key, String ticketId) {
        return new IllegalArgumentException("ticket id '" + ticketId + "' is already open for key '" + key
                + "' of rule '" + rule + "'; a ticket id must be unique while its ticket lives");
    }

    /**
     * Refuses a rule with a limit that cannot settle, naming the limit, before anything is charged.
     *
     * @throws UnsupportedOperationException naming the limit, its algorithm and why
     */
    public static void check(Rule rule) {
        for (Limit limit : rule.limits()) {
            AlgorithmName name = AlgorithmName.of(limit);
            String why = why(name);
            if (why != null) {
                throw new UnsupportedOperationException("limit '" + limit.name() + "' of rule '" + rule.name()
                        + "' is " + name.text() + ", which cannot settle a ticket: " + why);
            }
        }
    }
}
