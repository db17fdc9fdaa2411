package io.sluice.internal.memory;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The in-memory store's open tickets ({@code RateLimiter.tryCharge}): a bounded table with expiry. A ticket is
 * taken out exactly once ({@link #take}), which is what makes a settlement idempotent: the one call that takes
 * it applies the difference, every later one finds nothing.
 *
 * <p>Bounded: past {@code maxTickets} the oldest ticket is forgotten (it then stays charged at its estimate, as
 * an expired one does). Expired tickets are dropped from the head as tickets are added, a few at a time; with
 * lifetimes that differ a short-lived ticket behind a long-lived one waits for it, which the bound caps. One
 * lock: tickets are taken and given per estimated call (an LLM call, a download), not per permit, so this is
 * not the nanosecond path that decisions take.
 */
final class TicketBook {

    /** Where a ticket is held: one rule name, one key, one id. */
    record Id(String rule, String key, String id) {}

    /**
     * An open ticket: the rule version and estimate it charged, where each limit's charge went
     * ({@code Settleable.mark}), and when it expires (store clock, µs).
     */
    record Open(io.sluice.Rule rule, long estimate, long[] marks, long expiresAt) {}

    private static final int DROPS_PER_ADD = 4;

    private final long maxTickets;
    private final LinkedHashMap<Id, Open> open = new LinkedHashMap<>();

    TicketBook(long maxTickets) {
        this.maxTickets = maxTickets;
    }

    /** Keeps {@code ticket} under {@code id} (replacing a ticket of the same id), dropping expired or excess ones. */
    synchronized void add(Id id, Open ticket, long now) {
        open.remove(id);
        open.put(id, ticket);
        Iterator<Map.Entry<Id, Open>> it = open.entrySet().iterator();
        for (int i = 0; i < DROPS_PER_ADD && it.hasNext(); i++) {
            if (now < it.next().getValue().expiresAt()) {
                break;
            }
            it.remove();
        }
        while (open.size() > maxTickets) {
            it = open.entrySet().iterator();
            it.next();
            it.remove();
        }
    }

    /** Removes and returns the ticket, or null when it is not held or has expired at {@code now}. */
    synchronized Open take(Id id, long now) {
        Open t = open.remove(id);
        return t == null || now >= t.expiresAt() ? null : t;
    }

    /** Whether a live ticket of this id is held (a charge must not reuse the id of one). */
    synchronized boolean holds(Id id, long now) {
        Open t = open.get(id);
        return t != null && now < t.expiresAt();
    }

    synchronized int size() {
        return open.size();
    }
}
