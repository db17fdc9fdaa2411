package io.sluice.internal;

import io.sluice.Decision;
import io.sluice.Lockout;
import io.sluice.Request;
import io.sluice.internal.algorithm.Arith;

/**
 * {@link RuleEvaluator#evaluate} for a rule with a {@link Lockout}: the lockout's pure transition around the
 * limits' evaluation. {@code lockout.lua} ports it line by line.
 *
 * <h2>Model</h2>
 *
 * The lockout keeps one small state per key next to the limits' states (in memory the last slot of the states
 * array, in Redis one more key in the same hash slot): {@code count} rejections counted in the window that
 * opened at {@code since}, and {@code until}, the end of the last lockout (0: none yet).
 *
 * <pre>
 *   state (count, since, until), request at now:
 *     now &lt; until                        locked out: reject, retry-after until − now; nothing else happens
 *     otherwise the limits decide; if they reject a try, best-effort or reservation (not a peek):
 *       count = 0 or now − since ≥ within   count = 1, since = now          (a new window)
 *       else                                 count = count + 1
 *       count ≥ after                        count = 0, since = now, until = min(now + for, 2^53): locked out,
 *                                            the decision says so with retry-after until − now
 * </pre>
 *
 * Worked example, {@code after 3, within 15m, for 1h}, a limit of 5 a minute: the 6th, 7th and 8th attempts of
 * one minute are rejected by the limit (count 1, 2, 3); the 8th locks the key out and answers retry-after 1h.
 * Every attempt in the next hour is rejected with the time left (the limit is not asked, nothing is charged,
 * the lockout is not extended). After the hour the limit decides again and counting starts from 0. Had the
 * three rejections been spread over more than 15 minutes, the window would have restarted at the first
 * rejection more than 15 minutes after the window's first one, and no lockout would follow.
 *
 * <p>Invariants. A locked-out key's limits see no request, so their states are exactly those they had when the
 * lockout began, minus what time restores. {@code until − now} never exceeds {@code for} unless the clock steps
 * back (then, as for the limits, no time has passed: the lockout lasts until {@code until}). The state means the
 * same as no state once {@code now ≥ until} and ({@code count = 0} or {@code now − since ≥ within}); the
 * comparisons are written as differences, exact in Lua's doubles, and {@code until} is capped at 2^53 (no clock
 * reading passes it) so the sum is exact in Lua too.
 */
public final class LockoutEvaluator {

    private LockoutEvaluator() {}

    /** The lockout state of one key: rejections counted since {@code since}, and the end of the last lockout. */
    public record State(long count, long since, long until) {}

    static RuleEvaluator.Outcome evaluate(CompiledRule rule, Object[] states, long now, Request request) {
        int n = rule.size();
        State lock = (State) states[n];
        if (lock != null && now < lock.until()) {
            return new RuleEvaluator.Outcome(Decision.lockout(lock.until() - now, Decision.Source.STORE), null);
        }
        // The limits' evaluation reads only slots 0..n-1 and returns n states (or null: nothing changes).
        RuleEvaluator.Outcome limits = RuleEvaluator.evaluateLimits(rule, states, now, request);
        Decision decision = limits.decision();
        if (decision.allowed() || request.op() == Request.Op.PEEK) {
            return new RuleEvaluator.Outcome(decision, limits.states() == null ? null
                    : withLockout(limits.states(), n, lock));
        }
        State next = rejected(rule.lockout(), lock, now);
        Object[] out = withLockout(limits.states() == null ? states : limits.states(), n, next);
        if (now < next.until()) {
            decision = Decision.lockout(next.until() - now, Decision.Source.STORE);
        }
        return new RuleEvaluator.Outcome(decision, out);
    }

    /** The state after a rejection counted at {@code now} (not locked out at {@code now}). */
    static State rejected(Lockout lockout, State lock, long now) {
        long until = lock == null ? 0 : lock.until();
        if (lock == null || lock.count() == 0 || now - lock.since() >= lockout.withinMicros()) {
            lock = new State(0, now, until);
        }
        long count = lock.count() + 1;
        if (count >= lockout.after()) {
            return new State(0, now, Math.min(now + lockout.durationMicros(), Arith.MAX_TIME));
        }
        return new State(count, lock.since(), until);
    }

    /** Whether {@code lock} means the same as no state at {@code now}. */
    static boolean expired(Lockout lockout, State lock, long now) {
        return now >= lock.until() && (lock.count() == 0 || now - lock.since() >= lockout.withinMicros());
    }

    /** The first instant at which {@code lock} has {@link #expired}. */
    static long expiresAt(Lockout lockout, State lock) {
        return lock.count() == 0 ? lock.until() : Math.max(lock.until(), lock.since() + lockout.withinMicros());
    }

    /** The n limit states followed by the lockout's. */
    private static Object[] withLockout(Object[] limitStates, int n, State lock) {
        Object[] out = new Object[n + 1];
        System.arraycopy(limitStates, 0, out, 0, n);
        out[n] = lock;
        return out;
    }
}
