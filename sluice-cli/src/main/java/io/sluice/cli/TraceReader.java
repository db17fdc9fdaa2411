package io.sluice.cli;

import io.sluice.rules.Millis;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sluice.RateLimiter;
import io.sluice.Ticket;
import java.io.BufferedReader;
import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads a trace (JSON lines) one line at a time, so memory does not grow with the trace, and checks each line
 * completely before it is replayed: fields, types, which fields the op takes, and non-decreasing time.
 */
final class TraceReader implements Closeable {

    /** Latest time any store accepts: 2^53 µs (the year 2255). */
    static final long MAX_TIME_MICROS = 1L << 53;

    private static final List<String> FIELDS = List.of("t_ms", "op", "key", "rule", "limit", "permits",
            "max_wait_ms", "lease", "params", "keys", "targets", "estimate", "lifetime_ms", "ticket", "actual");
    private static final int T_MS = 1;
    private static final int OP = 1 << 1;
    private static final int KEY = 1 << 2;
    private static final int RULE = 1 << 3;
    private static final int LIMIT = 1 << 4;
    private static final int PERMITS = 1 << 5;
    private static final int MAX_WAIT = 1 << 6;
    private static final int LEASE = 1 << 7;
    private static final int PARAMS = 1 << 8;
    private static final int KEYS = 1 << 9;
    private static final int TARGETS = 1 << 10;
    private static final int ESTIMATE = 1 << 11;
    private static final int LIFETIME = 1 << 12;
    private static final int TICKET = 1 << 13;
    private static final int ACTUAL = 1 << 14;

    private final BufferedReader in;
    private final String source;
    private final JsonFactory json = new ObjectMapper().getFactory();
    private int lineNumber;
    private long charsRead;
    private long previousTime = -1;
    private int previousTimeLine;

    TraceReader(BufferedReader in, String source) {
        this.in = in;
        this.source = source;
    }

    /** The trace's name in errors. */
    String source() {
        return source;
    }

    /** Characters read so far, line ends included (bytes, for ASCII traces): for the progress bar. */
    long charsRead() {
        return charsRead;
    }

    /** Lines read so far. */
    int lines() {
        return lineNumber;
    }

    /** The next line, or null at the end of the trace. */
    TraceLine next() throws IOException, InputException {
        String text = in.readLine();
        if (text == null) {
            return null;
        }
        lineNumber++;
        charsRead += text.length() + 1;
        TraceLine line = parse(text);
        if (line.timeMicros() < previousTime) {
            throw error("t_ms", "lines must be in non-decreasing time; " + Millis.format(line.timeMicros())
                    + " is before " + Millis.format(previousTime) + " on line " + previousTimeLine);
        }
        previousTime = line.timeMicros();
        previousTimeLine = lineNumber;
        return line;
    }

    @Override
    public void close() throws IOException {
        in.close();
    }

    private TraceLine parse(String text) throws IOException, InputException {
        int seen = 0;
        long time = -1;
        TraceOp op = TraceOp.TRY;
        String key = null;
        String rule = null;
        String limit = null;
        long permits = 1;
        long maxWait = Long.MAX_VALUE;
        long lease = 0;
        JsonNode params = null;
        JsonNode list = null;
        String ticket = null;
        long lifetime = Ticket.DEFAULT_LIFETIME.toNanos() / 1_000;
        long actual = 0;
        try (JsonParser p = json.createParser(text)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw error("", "expected a JSON object (one request per line)");
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                int bit = bit(field);
                if (bit == 0) {
                    throw error(field, "unknown field; a trace line has " + String.join(", ", FIELDS));
                }
                if ((seen & bit) != 0) {
                    throw error(field, "appears twice in the line");
                }
                seen |= bit;
                JsonToken value = p.nextToken();
                switch (bit) {
                    case T_MS:
                        time = millis(p, value, field, MAX_TIME_MICROS);
                        break;
                    case OP: {
                        String name = string(p, value, field);
                        op = TraceOp.byWireName(name);
                        if (op == null) {
                            throw error(field, "expected one of try, try_at_most, acquire, peek, release, reset,"
                                    + " set_limit, try_all, charge, settle; was \"" + name + "\"");
                        }
                        break;
                    }
                    case KEY:
                        key = string(p, value, field);
                        break;
                    case RULE:
                        rule = string(p, value, field);
                        break;
                    case LIMIT:
                        limit = string(p, value, field);
                        break;
                    case PERMITS:
                        permits = integer(p, value, field);
                        break;
                    case MAX_WAIT:
                        maxWait = millis(p, value, field, MAX_TIME_MICROS);
                        break;
                    case LEASE:
                        lease = integer(p, value, field);
                        break;
                    case ESTIMATE:
                        // A charge's estimate is its permits: the limiter checks it against the rule alike.
                        permits = integer(p, value, field);
                        break;
                    case LIFETIME:
                        lifetime = millis(p, value, field, MAX_TIME_MICROS);
                        break;
                    case TICKET:
                        ticket = string(p, value, field);
                        break;
                    case ACTUAL:
                        actual = integer(p, value, field);
                        break;
                    case KEYS:
                    case TARGETS:
                        if (value != JsonToken.START_ARRAY) {
                            throw error(field, "expected a list; was " + describe(p, value));
                        }
                        list = p.readValueAsTree();
                        break;
                    default:
                        if (value != JsonToken.START_OBJECT) {
                            throw error(field, "expected an object of limit parameters, e.g. {\"limit\": 20}; was "
                                    + describe(p, value));
                        }
                        params = p.readValueAsTree();
                }
            }
            if (p.nextToken() != null) {
                throw error("", "expected one JSON object per line; found more after it");
            }
        } catch (JsonProcessingException e) {
            throw InputException.at(source, lineNumber, "", "not valid JSON (column "
                    + (e.getLocation() == null ? "?" : e.getLocation().getColumnNr()) + "): " + e.getOriginalMessage());
        }
        TraceLine line = check(seen, time, op, key, rule, limit, permits, maxWait, lease, params);
        if (op == TraceOp.CHARGE || op == TraceOp.SETTLE) {
            return withTicket(line, ticket, lifetime, actual);
        }
        return op == TraceOp.TRY_ALL ? withTargets(line, seen, list) : line;
    }

    /**
     * A {@code try_all} line's targets: {@code keys} under the line's rule or limit, or {@code targets}, each
     * <code>{"rule" or "limit", "key"}</code>; exactly one of the two, with at least one key.
     */
    private TraceLine withTargets(TraceLine line, int seen, JsonNode list) throws InputException {
        boolean byKeys = (seen & KEYS) != 0;
        if (byKeys == ((seen & TARGETS) != 0)) {
            throw error(byKeys ? "targets" : "keys", "expected exactly one of keys (keys of the line's rule or"
                    + " limit) and targets (a list of {\"rule\" or \"limit\", \"key\"})");
        }
        String field = byKeys ? "keys" : "targets";
        if (list.isEmpty()) {
            throw error(field, "expected at least one " + (byKeys ? "key" : "target"));
        }
        List<TraceLine.Target> targets = new ArrayList<>(list.size());
        for (int i = 0; i < list.size(); i++) {
            JsonNode n = list.get(i);
            String at = field + "[" + i + "]";
            if (byKeys) {
                if (!n.isTextual()) {
                    throw error(at, "expected a key (a string); was " + n);
                }
                targets.add(new TraceLine.Target(line.rule(), line.limit(), checkedKey(n.textValue(), at)));
                continue;
            }
            if (!n.isObject()) {
                throw error(at, "expected {\"rule\" or \"limit\", \"key\"}; was " + n);
            }
            for (java.util.Iterator<String> names = n.fieldNames(); names.hasNext(); ) {
                String name = names.next();
                if (!name.equals("rule") && !name.equals("limit") && !name.equals("key")) {
                    throw error(at + "." + name, "unknown field; a target has rule (or limit) and key");
                }
            }
            if (n.has("rule") == n.has("limit")) {
                throw error(at, "expected exactly one of rule (a rule name) and limit (a limit name)");
            }
            String name = n.has("rule") ? "rule" : "limit";
            if (!n.get(name).isTextual()) {
                throw error(at + "." + name, "expected a string; was " + n.get(name));
            }
            JsonNode k = n.get("key");
            if (k == null || !k.isTextual()) {
                throw error(at + ".key", k == null ? "missing; a target needs its key" : "expected a string; was " + k);
            }
            String ruleName = n.has("rule") ? n.get("rule").textValue() : null;
            String limitName = n.has("limit") ? n.get("limit").textValue() : null;
            targets.add(new TraceLine.Target(ruleName, limitName, checkedKey(k.textValue(), at + ".key")));
        }
        return new TraceLine(line.line(), line.op(), line.timeMicros(), null, null, null, line.permits(),
                line.maxWaitMicros(), line.lease(), null, List.copyOf(targets), null);
    }

    /**
     * A {@code charge} or {@code settle} line's ticket: its name (the characters a ticket id may have, as the
     * store's), a {@code charge}'s lifetime (1 ms to 1 day) and a {@code settle}'s actual cost (0 to 10^12).
     */
    private TraceLine withTicket(TraceLine line, String name, long lifetimeMicros, long actual)
            throws InputException {
        try {
            Ticket.checkId(name);
        } catch (IllegalArgumentException e) {
            throw error("ticket", e.getMessage().replace("ticket id", "a ticket name"));
        }
        long min = Ticket.MIN_LIFETIME.toNanos() / 1_000;
        long max = Ticket.MAX_LIFETIME.toNanos() / 1_000;
        if (lifetimeMicros < min || lifetimeMicros > max) {
            throw error("lifetime_ms", "expected milliseconds in [" + Millis.format(min) + ", " + Millis.format(max)
                    + "]; was " + Millis.format(lifetimeMicros));
        }
        try {
            Ticket.checkActual(actual);
        } catch (IllegalArgumentException e) {
            throw error("actual", "expected an integer in [0, " + io.sluice.Limit.MAX_COUNT + "]; was " + actual);
        }
        return new TraceLine(line.line(), line.op(), line.timeMicros(), line.key(), line.rule(), line.limit(),
                line.permits(), line.maxWaitMicros(), line.lease(), null, List.of(),
                new TraceLine.TicketRef(name, lifetimeMicros, actual));
    }

    private String checkedKey(String key, String field) throws InputException {
        try {
            return RateLimiter.checkKey(key);
        } catch (IllegalArgumentException e) {
            throw error(field, e.getMessage());
        }
    }

    /** Which fields the op takes, and their values' ranges. */
    private TraceLine check(int seen, long time, TraceOp op, String key, String rule, String limit, long permits,
                            long maxWait, long lease, JsonNode params) throws InputException {
        if ((seen & T_MS) == 0) {
            throw error("t_ms", "missing; every line needs its time in milliseconds since the Unix epoch");
        }
        int allowed;
        int required;
        switch (op) {
            case SET_LIMIT:
                allowed = LIMIT | PARAMS;
                required = LIMIT | PARAMS;
                break;
            case RELEASE:
                allowed = KEY | RULE | LIMIT | LEASE;
                required = KEY | LEASE;
                break;
            case RESET:
                allowed = KEY | RULE | LIMIT;
                required = KEY;
                break;
            case ACQUIRE:
                allowed = KEY | RULE | LIMIT | PERMITS | MAX_WAIT;
                required = KEY;
                break;
            case CHARGE:
                allowed = KEY | RULE | LIMIT | ESTIMATE | LIFETIME | TICKET;
                required = KEY | ESTIMATE | TICKET;
                break;
            case SETTLE:
                allowed = KEY | RULE | LIMIT | TICKET | ACTUAL;
                required = KEY | TICKET | ACTUAL;
                break;
            case TRY_ALL:
                // keys with one rule (or limit), or targets naming their own: withTargets checks which.
                allowed = (seen & TARGETS) != 0 ? TARGETS | PERMITS : KEYS | RULE | LIMIT | PERMITS;
                required = 0;
                break;
            default:
                allowed = KEY | RULE | LIMIT | PERMITS;
                required = KEY;
        }
        allowed |= T_MS | OP;
        for (int i = 0; i < FIELDS.size(); i++) {
            int bit = 1 << i;
            if ((seen & bit) != 0 && (allowed & bit) == 0) {
                throw error(FIELDS.get(i), "op " + op.wireName() + " does not take " + FIELDS.get(i));
            }
            if ((required & bit) != 0 && (seen & bit) == 0) {
                throw error(FIELDS.get(i), "missing; op " + op.wireName() + " needs it");
            }
        }
        boolean ownTargets = op == TraceOp.TRY_ALL && (seen & TARGETS) != 0;
        if (op != TraceOp.SET_LIMIT && !ownTargets && ((seen & RULE) == 0) == ((seen & LIMIT) == 0)) {
            throw error((seen & RULE) != 0 ? "limit" : "rule", "expected exactly one of rule (a rule name) and"
                    + " limit (a limit name, meaning a rule of that one limit)");
        }
        if (key != null) {
            try {
                RateLimiter.checkKey(key);
            } catch (IllegalArgumentException e) {
                throw error("key", e.getMessage());
            }
        }
        long minPermits = op == TraceOp.PEEK ? 0 : 1;
        // Absent means 1; any value given is checked, -1 included (it once stood for "absent" here).
        if (op == TraceOp.CHARGE) {
            if (permits < 1) {
                throw error("estimate", "expected an integer of at least 1; was " + permits);
            }
        } else if ((seen & PERMITS) == 0) {
            permits = 1;
        } else if (permits < minPermits) {
            throw error("permits", "expected an integer of at least " + minPermits + "; was " + permits);
        }
        return new TraceLine(lineNumber, op, time, key, rule, limit, permits, maxWait, lease, params);
    }

    /** The field's bit in the "seen" mask; 0 for an unknown field. */
    private static int bit(String field) {
        switch (field) {
            case "t_ms":
                return T_MS;
            case "op":
                return OP;
            case "key":
                return KEY;
            case "rule":
                return RULE;
            case "limit":
                return LIMIT;
            case "permits":
                return PERMITS;
            case "max_wait_ms":
                return MAX_WAIT;
            case "lease":
                return LEASE;
            case "params":
                return PARAMS;
            case "keys":
                return KEYS;
            case "targets":
                return TARGETS;
            case "estimate":
                return ESTIMATE;
            case "lifetime_ms":
                return LIFETIME;
            case "ticket":
                return TICKET;
            case "actual":
                return ACTUAL;
            default:
                return 0;
        }
    }

    private String string(JsonParser p, JsonToken value, String field) throws IOException, InputException {
        if (value != JsonToken.VALUE_STRING) {
            throw error(field, "expected a string; was " + describe(p, value));
        }
        return p.getText();
    }

    private long integer(JsonParser p, JsonToken value, String field) throws IOException, InputException {
        if (value != JsonToken.VALUE_NUMBER_INT || p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
            throw error(field, "expected an integer; was " + describe(p, value));
        }
        return p.getLongValue();
    }

    /** A number of milliseconds as whole microseconds: integers fast, decimals exactly. */
    private long millis(JsonParser p, JsonToken value, String field, long maxMicros) throws IOException, InputException {
        if (value == JsonToken.VALUE_NUMBER_INT && p.getNumberType() != JsonParser.NumberType.BIG_INTEGER) {
            long ms = p.getLongValue();
            if (ms >= 0 && ms <= maxMicros / 1_000) {
                return ms * 1_000;
            }
        }
        if (value != JsonToken.VALUE_NUMBER_INT && value != JsonToken.VALUE_NUMBER_FLOAT) {
            throw error(field, "expected a number of milliseconds; was " + describe(p, value));
        }
        try {
            return Millis.parseMicros(p.getText(), maxMicros);
        } catch (IllegalArgumentException e) {
            throw error(field, e.getMessage());
        }
    }

    private static String describe(JsonParser p, JsonToken value) throws IOException {
        switch (value) {
            case VALUE_STRING:
                return "the string \"" + p.getText() + "\"";
            case START_OBJECT:
                return "an object";
            case START_ARRAY:
                return "a list";
            case VALUE_NULL:
                return "null";
            default:
                return p.getText();
        }
    }

    private InputException error(String field, String problem) {
        return InputException.at(source, lineNumber, field, problem);
    }
}
