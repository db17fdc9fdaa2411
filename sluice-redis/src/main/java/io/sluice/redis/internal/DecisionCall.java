package io.sluice.redis.internal;

import io.sluice.Decision;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.internal.ShadowEvaluator;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * One script call deciding one request (or returning one lease) over the limits of one or more (rule, key)
 * targets, or several requests of one target in order (the batch form, coalesced mode), and the reading of its
 * reply. The argument layout is documented in {@code rule.lua}.
 */
final class DecisionCall {

    /** A compiled rule on a key, with its state keys. */
    record Target(RedisRule rule, String key, String[] stateKeys) {}

    /** One request of a batch call: a decision ({@code request} set) or the return of a lease. */
    record Op(Request request, long lease) {
        static Op decide(Request request) {
            return new Op(request, 0);
        }

        static Op release(long lease) {
            return new Op(null, lease);
        }

        boolean isRelease() {
            return request == null;
        }
    }

    private static final int REPLY_SIZE = 11;
    /** Reply fields per request of a batch call (the single form's, without replayed). */
    private static final int FIELDS = REPLY_SIZE - 1;

    private final ScriptCall call;
    private final String[] limitNames;
    private final Request request;
    private final List<Op> ops;

    private DecisionCall(ScriptCall call, String[] limitNames, Request request) {
        this(call, limitNames, request, null);
    }

    private DecisionCall(ScriptCall call, String[] limitNames, Request request, List<Op> ops) {
        this.call = call;
        this.limitNames = limitNames;
        this.request = request;
        this.ops = ops;
    }

    /**
     * A decision of {@code request} over {@code targets}, all or nothing.
     *
     * @param now       client time in microseconds, or "" for Redis server time
     * @param requestId "" for no replay protection (peeks charge nothing and carry none)
     */
    static DecisionCall decide(List<Target> targets, Request request, String now, String requestId,
                               KeyLayout layout, String dedupTtlMillis) {
        String id = request.op() == Request.Op.PEEK ? "" : requestId;
        long permits = request.permits();
        for (Target t : targets) {
            permits = permitsOf(t, request, permits);
        }
        return build(targets, op(request.op()), Long.toString(permits),
                Long.toString(request.maxWaitMicros()), now, id, layout, dedupTtlMillis, request, null);
    }

    /**
     * A charge of {@code estimate} that, when admitted, writes ticket {@code ticketKey} living
     * {@code lifetimeMicros} (rule.lua's "charge"; settle.lua).
     */
    static DecisionCall charge(Target target, long estimate, String ticketKey, long lifetimeMicros, String now,
                               String requestId, KeyLayout layout, String dedupTtlMillis) {
        return build(List.of(target), "charge", Long.toString(estimate), Long.toString(lifetimeMicros), now,
                requestId, layout, dedupTtlMillis, Request.tryAcquire(estimate), ticketKey);
    }

    /** The settlement of ticket {@code ticketKey} at {@code actual} (rule.lua's "settle"; settle.lua). */
    static DecisionCall settle(Target target, String ticketKey, long actual, String now, String requestId,
                               KeyLayout layout, String dedupTtlMillis) {
        return build(List.of(target), "settle", Long.toString(actual), "0", now, requestId, layout, dedupTtlMillis,
                null, ticketKey);
    }

    /** A return of {@code lease} to the limits of one target. */
    static DecisionCall release(Target target, long lease, String now, String requestId, KeyLayout layout,
                                String dedupTtlMillis) {
        return build(List.of(target), "release", Long.toString(lease), "0", now, requestId, layout, dedupTtlMillis,
                null, null);
    }

    /**
     * Several requests of one target, decided inside Redis one after another in list order at one {@code now},
     * each as its own call would have been decided at that instant (the batch form of {@code rule.lua}).
     *
     * @param requestId one id for the whole call; ignored (none sent) when every request is a peek
     */
    static DecisionCall batch(Target target, List<Op> ops, String now, String requestId, KeyLayout layout,
                              String dedupTtlMillis) {
        boolean onlyPeeks = ops.stream().allMatch(o -> !o.isRelease() && o.request().op() == Request.Op.PEEK);
        DecisionCall header = build(List.of(target), "batch", Integer.toString(ops.size()), "0", now,
                onlyPeeks ? "" : requestId, layout, dedupTtlMillis, null, null);
        String[] head = header.call.args();
        String[] args = Arrays.copyOf(head, head.length + 3 * ops.size());
        int next = head.length;
        for (Op op : ops) {
            if (op.isRelease()) {
                args[next++] = "release";
                args[next++] = Long.toString(op.lease());
                args[next++] = "0";
            } else {
                args[next++] = op(op.request().op());
                args[next++] = Long.toString(permitsOf(target, op.request(), op.request().permits()));
                args[next++] = Long.toString(op.request().maxWaitMicros());
            }
        }
        return new DecisionCall(new ScriptCall(header.call.keys(), args), header.limitNames, null, List.copyOf(ops));
    }

    private static DecisionCall build(List<Target> targets, String op, String amount, String maxWait, String now,
                                      String requestId, KeyLayout layout, String dedupTtlMillis, Request request,
                                      String ticketKey) {
        List<String> keys = new ArrayList<>();
        List<String> names = new ArrayList<>();
        StringBuilder shadowMask = null;
        List<String> args = new ArrayList<>(List.of(op, amount, maxWait, now, requestId, dedupTtlMillis, ""));
        List<String> previous = null;
        for (Target t : targets) {
            for (int i = 0; i < t.rule().size(); i++) {
                keys.add(t.stateKeys()[i]);
                names.add(t.rule().limitName(i));
                boolean shadow = t.rule().rule().isShadow(t.rule().limitName(i));
                if (shadow && shadowMask == null) {
                    shadowMask = new StringBuilder("0".repeat(names.size() - 1));
                }
                if (shadowMask != null) {
                    shadowMask.append(shadow ? '1' : '0');
                }
                args.add(t.rule().algorithm(i));
                args.add(t.rule().fingerprint(i));
                args.add(t.rule().params(i, now));
                String[] versions = t.rule().previous(i);
                if (versions.length > 0) {
                    // After all limits: (limit index, fingerprint, words) per previous version. None usually.
                    previous = previous == null ? new ArrayList<>() : previous;
                    String index = Integer.toString(names.size());
                    for (int v = 0; v < versions.length; v += 2) {
                        previous.add(index);
                        previous.add(versions[v]);
                        previous.add(versions[v + 1]);
                    }
                }
            }
        }
        // "n", or "n:MASK" with a 1 per shadow limit (rule.lua).
        String count = Integer.toString(names.size());
        if (shadowMask != null) {
            shadowMask.append("0".repeat(names.size() - shadowMask.length()));
            count += ":" + shadowMask;
        }
        String lockoutKey = null;
        if (targets.size() == 1 && targets.get(0).rule().lockoutWords() != null) {
            // "|after within for" and the lockout's key last (rule.lua, lockout.lua); never in a batch call.
            Target t = targets.get(0);
            count += "|" + t.rule().lockoutWords();
            lockoutKey = t.stateKeys()[t.rule().size()];
        } else if (targets.size() == 1 && !op.equals("batch") && targets.get(0).rule().dropsLockout()) {
            // "|drop": the rule's lockout was removed; the key forgets its state (rule.lua, RedisRule).
            Target t = targets.get(0);
            count += "|drop";
            lockoutKey = layout.lockoutKey(t.rule().rule().name(), t.key());
        }
        args.set(6, count);
        if (previous != null) {
            args.addAll(previous);
        }
        if (!requestId.isEmpty()) {
            keys.add(layout.requestKey(keys.get(0), requestId));
        }
        if (ticketKey != null) {
            keys.add(ticketKey);    // right after the dedup key, before the lockout's (rule.lua)
        }
        if (lockoutKey != null) {
            keys.add(lockoutKey);
        }
        return new DecisionCall(new ScriptCall(keys.toArray(new String[0]), args.toArray(new String[0])),
                names.toArray(new String[0]), request);
    }

    /** A best-effort request on a rule with shadow limits is capped as {@link ShadowEvaluator#atMost} caps it. */
    private static long permitsOf(Target target, Request request, long permits) {
        Rule rule = target.rule().rule();
        return request.op() == Request.Op.TRY_AT_MOST && !rule.shadow().isEmpty()
                ? ShadowEvaluator.atMost(rule, permits) : permits;
    }

    private static String op(Request.Op op) {
        return switch (op) {
            case TRY -> "try";
            case TRY_AT_MOST -> "at_most";
            case RESERVE -> "reserve";
            case PEEK -> "peek";
        };
    }

    ScriptCall call() {
        return call;
    }

    /** The decision in a reply of a {@link #decide} call. */
    Decision decision(List<Object> reply) {
        check(reply);
        return decisionAt(reply, 0);
    }

    /**
     * The decision in the ten fields from {@code at}; the shadow fields name a limit when the 9th is not 0; a
     * decider of 0 is the rule's lockout.
     */
    private Decision decisionAt(List<Object> reply, int at) {
        int decider = (int) number(reply, at + 6);
        if (decider == 0) {
            return Decision.lockout(number(reply, at + 3), Decision.Source.STORE);
        }
        int shadowDecider = (int) number(reply, at + 8);
        return new Decision(number(reply, at) == 1, number(reply, at + 1), number(reply, at + 2),
                number(reply, at + 3), number(reply, at + 4), number(reply, at + 5), limitNames[decider - 1],
                number(reply, at + 7), Decision.Source.STORE, shadowDecider == 0 ? null : limitNames[shadowDecider - 1],
                number(reply, at + 9));
    }

    /**
     * The start of rule.lua's error reply to a {@link #charge} whose ticket id is still open for the rule and
     * key (the call charged nothing).
     */
    static final String TICKET_OPEN = "sluice: ticket id already open";

    /** Whether a failed {@link #charge} failed because its ticket id is still open ({@link #TICKET_OPEN}). */
    static boolean ticketOpen(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (t instanceof io.lettuce.core.RedisCommandExecutionException && t.getMessage() != null
                    && t.getMessage().contains(TICKET_OPEN)) {
                return true;
            }
        }
        return false;
    }

    /** The outcome of a {@link #settle} call: whether it settled the ticket, its estimate and the actual cost. */
    io.sluice.Settlement settlement(List<Object> reply) {
        check(reply);
        return number(reply, 0) == 1 ? new io.sluice.Settlement(true, number(reply, 1), number(reply, 2))
                : io.sluice.Settlement.unknown();
    }

    /** Whether the lease was held, from a reply of a {@link #release} call. */
    boolean released(List<Object> reply) {
        check(reply);
        return number(reply, 0) == 1;
    }

    /**
     * The outcome of each request of a {@link #batch} call, in order: a {@link Decision} for a decision, a
     * {@link Boolean} (whether the lease was held) for a release.
     */
    List<Object> outcomes(List<Object> reply) {
        int expected = FIELDS * ops.size() + 1;
        if (reply == null || reply.size() != expected) {
            throw new IllegalStateException("the Sluice script replied " + reply + " to a batch of " + ops.size()
                    + "; expected " + expected + " fields");
        }
        List<Object> out = new ArrayList<>(ops.size());
        for (int i = 0; i < ops.size(); i++) {
            int at = FIELDS * i;
            if (ops.get(i).isRelease()) {
                out.add(number(reply, at) == 1);
            } else {
                out.add(decisionAt(reply, at));
            }
        }
        return out;
    }

    /** Whether the script answered with the stored reply of an earlier call with the same request id. */
    static boolean replayed(List<Object> reply) {
        return reply != null && !reply.isEmpty() && reply.size() % FIELDS == 1
                && "1".equals(String.valueOf(reply.get(reply.size() - 1)));
    }

    Request request() {
        return request;
    }

    private static void check(List<Object> reply) {
        if (reply == null || reply.size() != REPLY_SIZE) {
            throw new IllegalStateException("the Sluice script replied " + reply + "; expected " + REPLY_SIZE
                    + " fields");
        }
    }

    private static long number(List<Object> reply, int i) {
        return Long.parseLong(String.valueOf(reply.get(i)));
    }
}
