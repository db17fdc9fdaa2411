package io.sluice.internal;

import io.sluice.Decision;
import io.sluice.Request;
import io.sluice.internal.algorithm.Algorithm;
import io.sluice.internal.algorithm.Step;

/**
 * Decides one request under every limit of a rule, all or nothing, as a pure function of the limits' states.
 *
 * <p>Each limit steps on its own state. When every limit admits, every limit's {@code admitted} state is
 * committed; when any rejects, every limit's {@code rejected} state is (the unchanged state, except a
 * {@code count_rejected} limit recording the attempt), so a rejected request charges nothing. A best-effort
 * request first asks each limit how many it could grant and then steps all of them with the smallest count.
 * The Redis Lua scripts follow the same order of operations.
 */
public final class RuleEvaluator {

    private RuleEvaluator() {}

    /** A decision and the states to commit ({@code null} when nothing changes). */
    public record Outcome(Decision decision, Object[] states) {}

    /**
     * Decides {@code request} on {@code states}: one state per limit, then the lockout's when the rule has one
     * ({@link CompiledRule#slots()}).
     */
    public static Outcome evaluate(CompiledRule rule, Object[] states, long now, Request request) {
        if (rule.hasLockout()) {
            return LockoutEvaluator.evaluate(rule, states, now, request);
        }
        return evaluateLimits(rule, states, now, request);
    }

    /** The limits' part of {@link #evaluate}: reads the first {@code rule.size()} states, returns as many. */
    static Outcome evaluateLimits(CompiledRule rule, Object[] states, long now, Request request) {
        if (rule.hasShadow()) {
            return ShadowEvaluator.evaluate(rule, states, now, request);
        }
        int n = rule.size();
        long permits = request.permits();
        long maxWait = request.op() == Request.Op.RESERVE ? request.maxWaitMicros() : 0;
        if (request.op() == Request.Op.TRY_AT_MOST) {
            long grantable = permits;
            for (int i = 0; i < n && grantable > 0; i++) {
                grantable = Math.min(grantable, rule.algorithm(i).grantable(states[i], now, grantable));
            }
            // Nothing grantable: step one permit so the rejection carries a meaningful retry-after.
            permits = Math.max(grantable, 1);
        }
        if (n == 1) {
            return evaluateOne(rule, states, now, request, permits, maxWait);
        }
        @SuppressWarnings("unchecked")
        Step<Object>[] steps = new Step[n];
        boolean allowed = true;
        for (int i = 0; i < n; i++) {
            Algorithm<Object> algorithm = rule.algorithm(i);
            steps[i] = algorithm.step(states[i], now, permits, maxWait);
            allowed &= steps[i].allowed();
        }
        Decision decision = allowed ? admitted(rule, steps, request, permits, false) : rejected(rule, steps, false);
        if (request.op() == Request.Op.PEEK) {
            return new Outcome(decision, null);
        }
        Object[] next = new Object[n];
        boolean changed = false;
        for (int i = 0; i < n; i++) {
            next[i] = allowed ? steps[i].admitted() : steps[i].rejected();
            changed |= next[i] != states[i];
        }
        return new Outcome(decision, changed ? next : null);
    }

    /**
     * The same evaluation for a rule of one limit, the common case, without the array of steps: the decision is
     * that limit's step, reported as {@link #admitted} and {@link #rejected} would report it.
     */
    private static Outcome evaluateOne(CompiledRule rule, Object[] states, long now, Request request, long permits,
                                       long maxWait) {
        Algorithm<Object> algorithm = rule.algorithm(0);
        Step<Object> s = algorithm.step(states[0], now, permits, maxWait);
        Decision decision = decisionOfOne(algorithm, s, request, permits);
        if (request.op() == Request.Op.PEEK) {
            return new Outcome(decision, null);
        }
        Object next = nextOfOne(s);
        return new Outcome(decision, next == states[0] ? null : new Object[] {next});
    }

    /**
     * The permits a rule of one limit steps with for {@code request} on {@code state}: {@link #evaluate}'s
     * first step for {@code n == 1}, for a store that runs a single-limit rule without the arrays.
     */
    public static long permitsOfOne(Algorithm<Object> algorithm, Object state, long now, Request request) {
        long permits = request.permits();
        if (request.op() == Request.Op.TRY_AT_MOST) {
            long grantable = Math.min(permits, algorithm.grantable(state, now, permits));
            return Math.max(grantable, 1);
        }
        return permits;
    }

    /** The longest wait {@code request} accepts: its own for a reservation, 0 otherwise. */
    public static long maxWaitOf(Request request) {
        return request.op() == Request.Op.RESERVE ? request.maxWaitMicros() : 0;
    }

    /**
     * The decision of a rule of one limit whose step for {@code permits} was {@code s}; the state to commit is
     * {@link #nextOfOne}.
     */
    public static Decision decisionOfOne(Algorithm<Object> algorithm, Step<Object> s, Request request, long permits) {
        String name = algorithm.limit().name();
        if (s.allowed()) {
            boolean peek = request.op() == Request.Op.PEEK;
            return new Decision(true, peek ? 0 : permits, s.remaining(), 0, s.resetAfterMicros(), s.waitMicros(),
                    name, peek || s.lease() < 0 ? Decision.NO_LEASE : s.lease());
        }
        return new Decision(false, 0, s.remaining(), s.retryAfterMicros(), s.resetAfterMicros(), 0, name,
                Decision.NO_LEASE);
    }

    /** The state a rule of one limit commits after step {@code s} (a peek commits nothing: do not call it). */
    public static Object nextOfOne(Step<Object> s) {
        return s.allowed() ? s.admitted() : s.rejected();
    }

    /**
     * The decision of an admitted request from its steps; with {@code enforcedOnly} the shadow limits' steps are
     * left out (the rule must then have an enforced limit).
     */
    static Decision admitted(CompiledRule rule, Step<Object>[] steps, Request request, long permits,
                             boolean enforcedOnly) {
        int tightest = -1;
        long wait = 0;
        long reset = 0;
        long lease = Decision.NO_LEASE;
        for (int i = 0; i < steps.length; i++) {
            if (enforcedOnly && rule.shadow(i)) {
                continue;
            }
            if (tightest < 0) {
                tightest = i;
            }
            Step<Object> s = steps[i];
            if (s.remaining() < steps[tightest].remaining()) {
                tightest = i;
            }
            wait = Math.max(wait, s.waitMicros());
            reset = Math.max(reset, s.resetAfterMicros());
            if (s.lease() >= 0) {
                lease = s.lease();
            }
        }
        long granted = request.op() == Request.Op.PEEK ? 0 : permits;
        if (request.op() == Request.Op.PEEK) {
            lease = Decision.NO_LEASE;
        }
        return new Decision(true, granted, steps[tightest].remaining(), 0, reset, wait,
                rule.algorithm(tightest).limit().name(), lease);
    }

    /** The decision of a rejected request from its steps, with or without the shadow limits' (as admitted). */
    static Decision rejected(CompiledRule rule, Step<Object>[] steps, boolean enforcedOnly) {
        int decider = -1;
        long remaining = Long.MAX_VALUE;
        long reset = 0;
        for (int i = 0; i < steps.length; i++) {
            if (enforcedOnly && rule.shadow(i)) {
                continue;
            }
            Step<Object> s = steps[i];
            remaining = Math.min(remaining, s.remaining());
            reset = Math.max(reset, s.resetAfterMicros());
            if (!s.allowed() && (decider < 0 || s.retryAfterMicros() > steps[decider].retryAfterMicros())) {
                decider = i;
            }
        }
        return new Decision(false, 0, remaining, steps[decider].retryAfterMicros(), reset, 0,
                rule.algorithm(decider).limit().name(), Decision.NO_LEASE);
    }
}
