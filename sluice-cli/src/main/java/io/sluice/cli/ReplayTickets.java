package io.sluice.cli;

import io.sluice.Ticket;
import java.util.HashMap;
import java.util.Map;
import java.util.PriorityQueue;

/**
 * The open tickets of one replay run, by the name the trace gives each ({@code "ticket"} of a {@code charge}
 * line), so that a later {@code settle} line can settle the ticket the limiter drew. A name is scoped to the
 * line's rule (or limit) and key, as a ticket id is in the store; a ticket leaves when it is settled or when it
 * expires on the trace's clock (at its charge's time plus its lifetime, as the stores expire it), so memory
 * follows the open tickets, not the trace. Used by one thread.
 */
final class ReplayTickets {

    /** Where a name is unique: the rule (or one-limit rule) and the key. */
    private record Name(String rule, String key, String name) {}

    /**
     * An open ticket.
     *
     * @param ticket    what the limiter answered
     * @param expiresAt when the store forgets it, in microseconds on the trace's clock
     * @param line      the charge's line, for messages
     */
    record Open(Ticket ticket, long expiresAt, int line) {}

    private record Expiry(long at, Name name, Open open) {}

    private final Map<Name, Open> open = new HashMap<>();
    private final PriorityQueue<Expiry> expiries = new PriorityQueue<>((a, b) -> Long.compare(a.at(), b.at()));

    /** The ticket open under this name at {@code now}, or null. */
    Open find(String rule, String key, String name, long now) {
        expire(now);
        return open.get(new Name(rule, key, name));
    }

    /** Keeps a ticket the limiter answered until it is settled or expires. */
    void add(String rule, String key, String name, Open ticket) {
        Name n = new Name(rule, key, name);
        open.put(n, ticket);
        expiries.add(new Expiry(ticket.expiresAt(), n, ticket));
    }

    /** Takes the ticket open under this name at {@code now} out, or answers null. */
    Open take(String rule, String key, String name, long now) {
        expire(now);
        return open.remove(new Name(rule, key, name));
    }

    /** Forgets the tickets expired at {@code now}: a store holds a ticket while {@code now < expiresAt}. */
    private void expire(long now) {
        while (!expiries.isEmpty() && expiries.peek().at() <= now) {
            Expiry e = expiries.poll();
            // Settled and charged again under the same name: the new ticket is not this one.
            open.remove(e.name(), e.open());
        }
    }
}
