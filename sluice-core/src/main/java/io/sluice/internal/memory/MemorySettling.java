package io.sluice.internal.memory;

import io.sluice.Decision;
import io.sluice.Limit;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.Settlement;
import io.sluice.internal.CompiledRule;
import io.sluice.internal.RuleEvaluator;
import io.sluice.internal.Settling;
import io.sluice.internal.algorithm.Settleable;
import java.util.List;

/**
 * The in-memory store's charges of estimates and their settlements (docs/reference/settle.md). A charge is a
 * {@code tryAcquire} of the estimate that, when admitted, records where each limit's charge went
 * ({@link Settleable#mark}) in a ticket; a settlement takes the ticket out of the {@link TicketBook} (once: that
 * is the idempotency) and applies each limit's {@link Settleable#settle} to the key's states in one atomic
 * change. The lockout's state is never touched: a refund does not undo the rejections a lockout counted.
 */
final class MemorySettling {

    /** The mark of a limit the charge left without state (marks are times, never negative). */
    static final long NOT_CHARGED = -1;

    private final MemoryStore store;
    private final TicketBook tickets;

    MemorySettling(MemoryStore store, long maxTickets) {
        this.store = store;
        this.tickets = new TicketBook(maxTickets);
    }

    private record Charged(Decision decision, long[] marks, long at) {}

    Decision charge(Rule rule, String key, long estimate, String ticketId, long lifetimeMicros) {
        Settling.check(rule);
        TicketBook.Id id = new TicketBook.Id(rule.name(), key, ticketId);
        if (tickets.holds(id, store.clockNow())) {
            throw Settling.alreadyOpen(rule.name(), key, ticketId);
        }
        Request request = Request.tryAcquire(estimate);
        Charged c = store.change(rule, key, (compiled, states, live, now) -> {
            RuleEvaluator.Outcome outcome = RuleEvaluator.evaluate(compiled, live, now, request);
            long[] marks = null;
            if (outcome.decision().allowed()) {
                marks = new long[compiled.size()];
                for (int i = 0; i < marks.length; i++) {
                    // No state after an admission: a shadow limit that would have rejected on a fresh key, so
                    // charged nothing; its settlement is skipped (NOT_CHARGED, as settle.lua writes it).
                    Object admitted = outcome.states() == null ? live[i] : outcome.states()[i];
                    marks[i] = admitted == null ? NOT_CHARGED : settleable(compiled, i).mark(admitted, now);
                }
            }
            return new MemoryStore.Changed<>(new Charged(outcome.decision(), marks, now), outcome.states());
        });
        if (c.decision().allowed()) {
            long expiresAt = c.at() + lifetimeMicros;
            tickets.add(id, new TicketBook.Open(rule, estimate, c.marks(), expiresAt), c.at());
        }
        return c.decision();
    }

    Settlement settle(Rule rule, String key, String ticketId, long actual) {
        TicketBook.Open t = tickets.take(new TicketBook.Id(rule.name(), key, ticketId), store.clockNow());
        if (t == null) {
            return Settlement.unknown();
        }
        if (actual == t.estimate()) {
            return new Settlement(true, t.estimate(), actual);
        }
        return store.change(rule, key, (compiled, states, live, now) -> {
            Object[] next = live.clone();
            boolean changed = false;
            List<Limit> charged = t.rule().limits();
            for (int i = 0; i < compiled.size(); i++) {
                // Each limit as the ticket charged it: same position, same name and parameters. After
                // updateLimit or a reload changed a limit, the ticket's mark no longer says where its charge went,
                // so that limit is left alone (the Redis store matches a limit's fingerprint at its position).
                if (i < charged.size() && charged.get(i).equals(compiled.algorithm(i).limit())
                        && t.marks()[i] != NOT_CHARGED) {
                    next[i] = settleable(compiled, i).settle(live[i], now, t.marks()[i], t.estimate(), actual);
                    changed |= next[i] != live[i];
                }
            }
            return new MemoryStore.Changed<>(new Settlement(true, t.estimate(), actual), changed ? next : null);
        });
    }

    @SuppressWarnings("unchecked")
    private static Settleable<Object> settleable(CompiledRule compiled, int i) {
        return (Settleable<Object>) compiled.algorithm(i);
    }
}
