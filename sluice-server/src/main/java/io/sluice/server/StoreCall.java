package io.sluice.server;

import com.fasterxml.jackson.databind.JsonNode;
import io.sluice.Decision;
import io.sluice.Limit;
import io.sluice.RateLimiter;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.Ticket;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * One {@code POST /v1/store/call} body, parsed strictly ({@link #parse}) and then checked against its rule
 * ({@link #check}) as the limiter would check the same call; the fields of the protocol are listed on
 * {@link StoreService}. Every refusal is an {@link InvalidRequestException} naming the field, so a call is
 * either whole or refused before anything is charged.
 */
final class StoreCall {

    private static final Set<String> FIELDS = Set.of("rule", "fingerprint", "key", "op", "permits",
            "max_wait_us", "lease", "now_us", "targets", "estimate", "ticket", "lifetime_us", "actual");
    /** The ops a call over several targets may decide: those that decide a request. */
    private static final Set<String> TARGET_OPS = Set.of("try", "try_at_most", "reserve", "peek");
    private static final long MIN_LIFETIME_US = Ticket.MIN_LIFETIME.toNanos() / 1_000;
    private static final long MAX_LIFETIME_US = Ticket.MAX_LIFETIME.toNanos() / 1_000;

    String rule;
    String fingerprint;
    String key;
    String op;
    long permits;
    long maxWaitMicros;
    long lease = Decision.NO_LEASE;
    /** The client's clock reading ({@code now_us}), or null to decide at the store's own time. */
    Long nowMicros;
    /** The request the op decides, built by {@link #check}; null for the ops that decide none. */
    Request request;
    /** For a call over several targets: each target's rule, fingerprint and key; else null. */
    List<String[]> targets;
    /** For {@code charge} and {@code settle}: the ticket's id. */
    String ticket;
    long lifetimeMicros;
    long actual;

    private StoreCall() {}

    /** Checks the permits against the rule the call names (or one of its targets' rules) and builds its request. */
    void check(Rule r) throws InvalidRequestException {
        if (op.equals("release") || op.equals("reset") || op.equals("settle")) {
            return;
        }
        if (op.equals("charge")) {
            long max = Math.min(r.maxPermits(), Limit.MAX_COUNT);
            if (permits < 1 || permits > max) {
                throw InvalidRequestException.at("estimate", "expected an integer in [1, " + max
                        + "] for rule '" + r.name() + "'; was " + permits);
            }
            return;
        }
        long max = op.equals("try_at_most") ? Limit.MAX_COUNT : Math.min(r.maxPermits(), Limit.MAX_COUNT);
        long min = op.equals("peek") ? 0 : 1;
        if (permits < min || permits > max) {
            throw InvalidRequestException.at("permits", "expected an integer in [" + min + ", " + max
                    + "] for rule '" + r.name() + "'; was " + permits);
        }
        request = switch (op) {
            case "try" -> Request.tryAcquire(permits);
            case "try_at_most" -> Request.tryAcquireAtMost(permits);
            case "reserve" -> Request.reserve(permits, maxWaitMicros);
            default -> Request.peek(permits);
        };
    }

    /**
     * Parses one call's JSON body.
     *
     * @param clientClock whether the server accepts {@code now_us} ({@code --clock client})
     */
    static StoreCall parse(JsonNode root, boolean clientClock) throws InvalidRequestException {
        if (!root.isObject()) {
            throw InvalidRequestException.at("", "expected a JSON object");
        }
        for (Iterator<String> names = root.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (!FIELDS.contains(name)) {
                throw InvalidRequestException.at(name, "unknown field; expected " + String.join(", ",
                        new TreeSet<>(FIELDS)));
            }
        }
        StoreCall c = new StoreCall();
        if (root.has("targets")) {
            c.targets = targets(root);
        } else {
            c.rule = text(root, "rule");
            c.fingerprint = text(root, "fingerprint");
            c.key = key(text(root, "key"), "key");
        }
        c.op = text(root, "op");
        if (c.targets != null && !TARGET_OPS.contains(c.op)) {
            throw InvalidRequestException.at("op", "a call over targets decides one of try, try_at_most, reserve,"
                    + " peek; was \"" + c.op + "\"");
        }
        switch (c.op) {
            case "try", "try_at_most", "reserve", "peek" -> c.permits = number(root, "permits");
            case "release" -> c.lease = number(root, "lease");
            case "reset" -> { }
            case "charge" -> {
                c.permits = number(root, "estimate");
                c.ticket = ticketId(root);
                c.lifetimeMicros = number(root, "lifetime_us");
                if (c.lifetimeMicros < MIN_LIFETIME_US || c.lifetimeMicros > MAX_LIFETIME_US) {
                    throw InvalidRequestException.at("lifetime_us", "expected microseconds in [" + MIN_LIFETIME_US
                            + ", " + MAX_LIFETIME_US + "]; was " + c.lifetimeMicros);
                }
            }
            case "settle" -> {
                c.ticket = ticketId(root);
                c.actual = number(root, "actual");
                try {
                    Ticket.checkActual(c.actual);
                } catch (IllegalArgumentException e) {
                    throw InvalidRequestException.at("actual", e.getMessage());
                }
            }
            default -> throw InvalidRequestException.at("op", "expected one of try, try_at_most, reserve, peek,"
                    + " release, reset, charge, settle; was \"" + c.op + "\"");
        }
        for (String field : List.of("estimate", "ticket", "lifetime_us", "actual")) {
            boolean takes = c.op.equals("charge") ? !field.equals("actual")
                    : c.op.equals("settle") && (field.equals("ticket") || field.equals("actual"));
            if (root.has(field) && !takes) {
                throw InvalidRequestException.at(field, "not used by op " + c.op);
            }
        }
        if (root.has("max_wait_us")) {
            if (!c.op.equals("reserve")) {
                throw InvalidRequestException.at("max_wait_us", "applies to op reserve only");
            }
            long w = number(root, "max_wait_us");
            if (w < -1) {
                throw InvalidRequestException.at("max_wait_us", "expected microseconds >= 0, or -1 for no bound");
            }
            c.maxWaitMicros = w == -1 ? Long.MAX_VALUE : w;
        }
        if (root.has("now_us")) {
            if (!clientClock) {
                throw InvalidRequestException.at("now_us", "this server decides at its own time; a client clock is"
                        + " accepted only by a server started with --clock client");
            }
            long now = number(root, "now_us");
            if (now < 0 || now > 1L << 53) {
                throw InvalidRequestException.at("now_us", "expected microseconds since the epoch in [0, 2^53]; was "
                        + now);
            }
            c.nowMicros = now;
        }
        return c;
    }

    private static String ticketId(JsonNode root) throws InvalidRequestException {
        try {
            return Ticket.checkId(text(root, "ticket"));
        } catch (IllegalArgumentException e) {
            throw InvalidRequestException.at("ticket", e.getMessage());
        }
    }

    /** The {@code targets} of a call over several: each <code>{"rule", "fingerprint", "key"}</code>. */
    private static List<String[]> targets(JsonNode root) throws InvalidRequestException {
        for (String single : List.of("rule", "fingerprint", "key")) {
            if (root.has(single)) {
                throw InvalidRequestException.at(single, "a call over targets names its rules and keys in targets");
            }
        }
        JsonNode list = root.get("targets");
        if (!list.isArray() || list.isEmpty()) {
            throw InvalidRequestException.at("targets", "expected a non-empty list of {rule, fingerprint, key}");
        }
        List<String[]> out = new ArrayList<>(list.size());
        for (int i = 0; i < list.size(); i++) {
            JsonNode t = list.get(i);
            String at = "targets[" + i + "]";
            if (!t.isObject()) {
                throw InvalidRequestException.at(at, "expected an object {rule, fingerprint, key}");
            }
            for (Iterator<String> names = t.fieldNames(); names.hasNext(); ) {
                String name = names.next();
                if (!name.equals("rule") && !name.equals("fingerprint") && !name.equals("key")) {
                    throw InvalidRequestException.at(at + "." + name, "unknown field; expected fingerprint, key, rule");
                }
            }
            out.add(new String[] {text(t, "rule", at + ".rule"), text(t, "fingerprint", at + ".fingerprint"),
                    key(text(t, "key", at + ".key"), at + ".key")});
        }
        return out;
    }

    private static String key(String key, String field) throws InvalidRequestException {
        try {
            return RateLimiter.checkKey(key);
        } catch (IllegalArgumentException e) {
            throw InvalidRequestException.at(field, e.getMessage());
        }
    }

    private static String text(JsonNode root, String field) throws InvalidRequestException {
        return text(root, field, field);
    }

    private static String text(JsonNode root, String field, String at) throws InvalidRequestException {
        JsonNode n = root.get(field);
        if (n == null || !n.isTextual()) {
            throw InvalidRequestException.at(at, n == null ? "missing; expected a string" : "expected a string");
        }
        return n.textValue();
    }

    private static long number(JsonNode root, String field) throws InvalidRequestException {
        JsonNode n = root.get(field);
        if (n == null || !n.canConvertToLong() || !n.isIntegralNumber()) {
            throw InvalidRequestException.at(field, n == null ? "missing; expected an integer" : "expected an integer");
        }
        return n.longValue();
    }
}
