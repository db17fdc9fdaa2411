package io.sluice.cli;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * One parsed, validated trace line.
 *
 * @param line          1-based line number in the trace
 * @param op            the operation
 * @param timeMicros    the line's {@code t_ms}, in microseconds since the Unix epoch
 * @param key           the key; null for {@code set_limit}
 * @param rule          the rule named, or null when the line names a {@code limit}
 * @param limit         the limit named (a one-limit rule of it, or the limit {@code set_limit} changes), or null
 * @param permits       permits asked for (default 1)
 * @param maxWaitMicros for {@code acquire}: the longest acceptable wait, {@link Long#MAX_VALUE} when unbounded
 * @param lease         for {@code release}: the lease to return
 * @param params        for {@code set_limit}: the parameters to change
 */
record TraceLine(int line, TraceOp op, long timeMicros, String key, String rule, String limit, long permits,
                 long maxWaitMicros, long lease, JsonNode params) {}
