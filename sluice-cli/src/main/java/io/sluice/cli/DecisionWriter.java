package io.sluice.cli;

import io.sluice.rules.Millis;
import io.sluice.Decision;
import io.sluice.Settlement;
import java.io.IOException;
import java.io.Writer;

/**
 * Writes the replay's output: exactly one JSON line per trace line, fields always in the same order, times in
 * the {@link Millis} format, so two runs (or two stores) that decide alike produce identical bytes.
 *
 * <pre>
 * {"t_ms":1000,"key":"u1","allowed":true,"granted":1,"remaining":4,"retry_after_ms":0,"reset_after_ms":60000,"wait_ms":0,"limit":"per_min"}
 * {"t_ms":1000,"key":"u1","lease":1000000,"released":true}                     release
 * {"t_ms":1000,"key":"u1","ok":true}                                           reset
 * {"t_ms":1000,"limit":"per_min","ok":true}                                    set_limit
 * {"t_ms":1000,"keys":["u1","t1"],"allowed":true,...}                          try_all
 * {"t_ms":1000,"key":"u1","allowed":true,...,"limit":"per_min","ticket":"c1"}   charge
 * {"t_ms":1000,"key":"u1","ticket":"c1","settled":true,"estimate":6,"actual":1,"refunded":5,"extra":0}   settle
 * </pre>
 *
 * {@code lease} is added to a decision that granted one; {@code shadow_limit} and {@code shadow_retry_after_ms}
 * to one that a shadow limit would have rejected (the limit, and the retry-after it would have given);
 * {@code tier} to one a tier of the rule decided; {@code locked_out: true} to a rejection by the rule's lockout
 * (limit {@code lockout}); {@code retry_after_ms} is {@code null} when no amount of waiting alone would do. A
 * {@code try_all} line names its keys in the trace's order, and its one decision holds for every one of them (all
 * or nothing). An admitted {@code charge} ends with the ticket's name; a {@code settle} line says whether it
 * found the ticket and what it applied (all 0 when it did not).
 */
final class DecisionWriter {

    private final Writer out;
    private final StringBuilder line = new StringBuilder(256);

    DecisionWriter(Writer out) {
        this.out = out;
    }

    void write(TraceLine l, Simulation.Outcome outcome) throws IOException {
        StringBuilder s = line;
        s.setLength(0);
        s.append("{\"t_ms\":");
        Millis.append(s, l.timeMicros());
        if (l.op() == TraceOp.TRY_ALL) {
            s.append(",\"keys\":[");
            for (int i = 0; i < l.targets().size(); i++) {
                string(s.append(i == 0 ? "" : ","), l.targets().get(i).key());
            }
            s.append(']');
            decision(s, outcome.decision());
        } else if (l.op() == TraceOp.SET_LIMIT) {
            s.append(",\"limit\":");
            string(s, l.limit());
            s.append(",\"ok\":true}\n");
        } else {
            s.append(",\"key\":");
            string(s, l.key());
            if (l.op() == TraceOp.RESET) {
                s.append(",\"ok\":true}\n");
            } else if (l.op() == TraceOp.RELEASE) {
                s.append(",\"lease\":").append(l.lease()).append(",\"released\":").append(outcome.released())
                        .append("}\n");
            } else if (l.op() == TraceOp.SETTLE) {
                Settlement settled = outcome.settlement();
                string(s.append(",\"ticket\":"), l.ticket().name());
                s.append(",\"settled\":").append(settled.settled()).append(",\"estimate\":").append(settled.estimate())
                        .append(",\"actual\":").append(settled.actual()).append(",\"refunded\":")
                        .append(settled.refunded()).append(",\"extra\":").append(settled.extra()).append("}\n");
            } else {
                decision(s, outcome.decision());
                if (l.op() == TraceOp.CHARGE && outcome.decision().allowed()) {
                    // An admitted charge holds a ticket under the trace's name for it.
                    s.setLength(s.length() - 2);
                    string(s.append(",\"ticket\":"), l.ticket().name());
                    s.append("}\n");
                }
            }
        }
        out.append(s);
    }

    private static void decision(StringBuilder s, Decision d) {
        s.append(",\"allowed\":").append(d.allowed());
        s.append(",\"granted\":").append(d.granted());
        s.append(",\"remaining\":").append(d.remaining());
        s.append(",\"retry_after_ms\":");
        duration(s, d.retryAfterMicros());
        s.append(",\"reset_after_ms\":");
        duration(s, d.resetAfterMicros());
        s.append(",\"wait_ms\":");
        duration(s, d.waitMicros());
        s.append(",\"limit\":");
        string(s, d.limit());
        if (d.lease() != Decision.NO_LEASE) {
            s.append(",\"lease\":").append(d.lease());
        }
        if (d.shadowRejected()) {
            s.append(",\"shadow_limit\":");
            string(s, d.shadowLimit());
            s.append(",\"shadow_retry_after_ms\":");
            duration(s, d.shadowRetryAfterMicros());
        }
        if (d.lockedOut()) {
            s.append(",\"locked_out\":true");
        }
        if (d.tier() != null) {
            s.append(",\"tier\":");
            string(s, d.tier());
        }
        s.append("}\n");
    }

    /** {@link Long#MAX_VALUE} is how decisions say "never"; JSON has null for that. */
    private static void duration(StringBuilder s, long micros) {
        if (micros == Long.MAX_VALUE) {
            s.append("null");
        } else {
            Millis.append(s, micros);
        }
    }

    /** A JSON string: quotes, backslashes and control characters escaped, everything else as is (UTF-8). */
    static void string(StringBuilder s, String value) {
        s.append('"');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '"' || c == '\\') {
                s.append('\\').append(c);
            } else if (c < 0x20) {
                s.append(String.format("\\u%04x", (int) c));
            } else {
                s.append(c);
            }
        }
        s.append('"');
    }
}
