package io.sluice.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;

/**
 * One parsed, validated trace line.
 *
 * @param line          1-based line number in the trace
 * @param op            the operation
 * @param timeMicros    the line's {@code t_ms}, in microseconds since the Unix epoch
 * @param key           the key; null for {@code set_limit} and {@code try_all}
 * @param rule          the rule named, or null when the line names a {@code limit}
 * @param limit         the limit named (a one-limit rule of it, or the limit {@code set_limit} changes), or null
 * @param permits       permits asked for (default 1)
 * @param maxWaitMicros for {@code acquire}: the longest acceptable wait, {@link Long#MAX_VALUE} when unbounded
 * @param lease         for {@code release}: the lease to return
 * @param params        for {@code set_limit}: the parameters to change
 * @param targets       for {@code try_all}: the (rule or limit, key) targets decided together, in trace order;
 *                      empty for every other op
 * @param ticket        for {@code charge} and {@code settle}: the ticket the line names; null for every other op
 *                      (a {@code charge}'s estimate is its {@code permits})
 */
record TraceLine(int line, TraceOp op, long timeMicros, String key, String rule, String limit, long permits,
                 long maxWaitMicros, long lease, JsonNode params, List<Target> targets, TicketRef ticket) {

    /** One target of a {@code try_all} line: a key under a rule, or under a one-limit rule ({@code limit}). */
    record Target(String rule, String limit, String key) {}

    /**
     * The ticket of a {@code charge} or {@code settle} line.
     *
     * @param name           the trace's name for it ({@code "ticket"})
     * @param lifetimeMicros for {@code charge}: how long it lives ({@code lifetime_ms}, default 10 minutes)
     * @param actual         for {@code settle}: the actual cost ({@code actual})
     */
    record TicketRef(String name, long lifetimeMicros, long actual) {}

    TraceLine(int line, TraceOp op, long timeMicros, String key, String rule, String limit, long permits,
              long maxWaitMicros, long lease, JsonNode params) {
        this(line, op, timeMicros, key, rule, limit, permits, maxWaitMicros, lease, params, List.of(), null);
    }
}
