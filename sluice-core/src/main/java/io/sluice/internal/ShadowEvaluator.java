package io.sluice.internal;

import io.sluice.Decision;
import io.sluice.Request;
import io.sluice.internal.algorithm.Step;

/**
 * {@link RuleEvaluator#evaluate} for a rule with shadow limits ({@link io.sluice.Rule#withShadow}). Pure, like
 * the evaluator; {@code rule.lua} ports it line by line.
 *
 * <p>The enforced limits decide as a rule of their own would (a best-effort request asks only them how many
 * they can grant). The shadow limits step with the same permits and wait, and are committed all or nothing
 * among themselves, as the rule with them in force would have committed them: their {@code admitted} states
 * when the request is admitted and every shadow limit would have admitted it, their {@code rejected} states
 * otherwise. So a shadow limit counts what it would have counted, and its state is the one it would have the
 * day it is put in force (for a rule of shadow limits only, exactly that rule's state).
 *
 * <p>The decision's fields come from the enforced limits; when there are none, from the shadow limits, allowed,
 * without a wait and with every permit asked for granted (a shadow never holds a caller back). The shadow limit
 * that would have rejected (the longest retry-after among those that would have) is reported in
 * {@link Decision#shadowLimit()} with its retry-after.
 */
public final class ShadowEvaluator {

    private ShadowEvaluator() {}

    static RuleEvaluator.Outcome evaluate(CompiledRule rule, Object[] states, long now, Request request) {
        int n = rule.size();
        long permits = request.permits();
        long maxWait = RuleEvaluator.maxWaitOf(request);
        if (request.op() == Request.Op.TRY_AT_MOST) {
            long grantable = atMost(rule.rule(), permits);
            for (int i = 0; i < n && grantable > 0; i++) {
                if (!rule.shadow(i)) {
                    grantable = Math.min(grantable, rule.algorithm(i).grantable(states[i], now, grantable));
                }
            }
            // Nothing grantable: step one permit so the rejection carries a meaningful retry-after.
            permits = Math.max(grantable, 1);
        }
        @SuppressWarnings("unchecked")
        Step<Object>[] steps = new Step[n];
        boolean allowed = true;
        boolean shadowAllowed = true;
        int shadowDecider = -1;
        for (int i = 0; i < n; i++) {
            steps[i] = rule.algorithm(i).step(states[i], now, permits, maxWait);
            if (!rule.shadow(i)) {
                allowed &= steps[i].allowed();
            } else if (!steps[i].allowed()) {
                shadowAllowed = false;
                if (shadowDecider < 0 || steps[i].retryAfterMicros() > steps[shadowDecider].retryAfterMicros()) {
                    shadowDecider = i;
                }
            }
        }
        Decision base;
        if (rule.enforced() > 0) {
            base = allowed ? RuleEvaluator.admitted(rule, steps, request, permits, true)
                    : RuleEvaluator.rejected(rule, steps, true);
        } else {
            base = shadowsOnly(rule, steps, request, permits);
        }
        Decision decision = shadowDecider < 0 ? base : new Decision(base.allowed(), base.granted(), base.remaining(),
                base.retryAfterMicros(), base.resetAfterMicros(), base.waitMicros(), base.limit(), base.lease(),
                base.source(), rule.algorithm(shadowDecider).limit().name(),
                steps[shadowDecider].retryAfterMicros());
        if (request.op() == Request.Op.PEEK) {
            return new RuleEvaluator.Outcome(decision, null);
        }
        boolean shadowCharged = allowed && shadowAllowed;
        Object[] next = new Object[n];
        boolean changed = false;
        for (int i = 0; i < n; i++) {
            boolean charged = rule.shadow(i) ? shadowCharged : allowed;
            next[i] = charged ? steps[i].admitted() : steps[i].rejected();
            changed |= next[i] != states[i];
        }
        return new RuleEvaluator.Outcome(decision, changed ? next : null);
    }

    /**
     * The most a best-effort request steps with: the rule's {@link io.sluice.Rule#maxPermits()}, which counts the
     * shadow limits. Only the enforced limits' grantable counts then, so without this cap a shadow limit could be
     * stepped with more permits than it could ever hold (a request other algorithms do not take). The Redis store
     * sends best-effort requests capped the same way.
     */
    public static long atMost(io.sluice.Rule rule, long permits) {
        return Math.min(permits, rule.maxPermits());
    }

    /** A rule of shadow limits only admits: the numbers of its limits, no wait, no retry-after, no lease. */
    private static Decision shadowsOnly(CompiledRule rule, Step<Object>[] steps, Request request, long permits) {
        int tightest = 0;
        long reset = 0;
        for (int i = 0; i < steps.length; i++) {
            if (steps[i].remaining() < steps[tightest].remaining()) {
                tightest = i;
            }
            reset = Math.max(reset, steps[i].resetAfterMicros());
        }
        long granted = request.op() == Request.Op.PEEK ? 0 : permits;
        return new Decision(true, granted, steps[tightest].remaining(), 0, reset, 0,
                rule.algorithm(tightest).limit().name(), Decision.NO_LEASE);
    }
}
