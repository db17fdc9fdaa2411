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
 * opened at {@code since}, {@code until}, the end of the last lockout (0: none yet), and the {@code after} and
 * {@code within} the count was counted under.
 *
 * <pre>
 *   state (count, since, until, after', within'), request at now:
 *     now &lt; until                        locked out: reject, retry-after until − now; nothing else happens
 *     otherwise the limits decide; if they reject a try, best-effort or reservation (not a peek):
 *       count = 0 or now − since ≥ within   count = 1, since = now          (a new window)
 *       or (after', within') ≠ the rule's
 *       else                                 count = count + 1
 *       count ≥ after                        count = 0, since = now, until = min(now + for, 2^53): locked out,
 *                                            the decision says so with retry-after until − now
 *     every state written records the rule's (after, within)
 * </pre>
 *
 * <p><b>A changed lockout.</b> A count kept under other {@code after} or {@code within} than the rule's now
 * (a reload changed them, or removed the lockout and added another) is no count: it was counted towards
 * another threshold, and in Redis its key expires when that other {@code within} says, so counting on under
 * the new one would depend on whether the key was still there. A lockout in force runs to the {@code until}
 * it was given, whatever the new {@code for}: its retry-after has been told to the caller. A key decided while
 * the rule has no lockout forgets its lockout state (the memory store drops its slot; the Redis store deletes
 * the key for a while after it saw the lockout removed, see {@code RedisRule}), so removing a lockout and
 * adding it back starts counting afresh.
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
 * same as no state once {@code now ≥ until} and ({@code count = 0}, {@code now − since ≥ within} or the count is
 * of other parameters); the
 * comparisons are written as differences, exact in Lua's doubles, and {@code until} is capped at 2^53 (no clock
 * reading passes it) so the sum is exact in Lua too.
 */
public final class LockoutEvaluator {

    private LockoutEvaluator() {}

    /**
     * The lockout state of one key: rejections counted since {@code since}, the end of the last lockout, and the
     * lockout's {@code after} and {@code within} (microseconds) the count was counted under.
     */
    public record State(long count, long since, long until, long after, long within) {}

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
        long after = lockout.after();
        long within = lockout.withinMicros();
        long until = lock == null ? 0 : lock.until();
        long count = 1;
        long since = now;
        if (lock != null && counts(lockout, lock) && now - lock.since() < within) {
            count = lock.count() + 1;
            since = lock.since();
        }
        if (count >= after) {
            return new State(0, now, Math.min(now + lockout.durationMicros(), Arith.MAX_TIME), after, within);
        }
        return new State(count, since, until, after, within);
    }

    /** Whether {@code lock} holds a count, counted under {@code lockout}'s own {@code after} and {@code within}. */
    static boolean counts(Lockout lockout, State lock) {
        return lock.count() != 0 && lock.after() == lockout.after() && lock.within() == lockout.withinMicros();
    }

    /** Whether {@code lock} means the same as no state at {@code now}. */
    static boolean expired(Lockout lockout, State lock, long now) {
        return now >= lock.until() && (!counts(lockout, lock) || now - lock.since() >= lockout.withinMicros());
    }

    /**
     * When {@code lock} is let go: the end of its lockout and of its count's window under the {@code within} it was
     * counted with, as the Redis key's TTL was set when it was written. That is when it has {@link #expired} under
     * the lockout it was written for; under one of other parameters it may have expired earlier, and is kept, as
     * in Redis, for that lockout's coming back.
     */
    static long expiresAt(State lock) {
        return lock.count() == 0 ? lock.until() : Math.max(lock.until(), lock.since() + lock.within());
    }

    /** The n limit states followed by the lockout's. */
    private static Object[] withLockout(Object[] limitStates, int n, State lock) {
        Object[] out = new Object[n + 1];
        System.arraycopy(limitStates, 0, out, 0, n);
        out[n] = lock;
        return out;
    }
}
