package io.sluice.internal.algorithm;

import io.sluice.Limit;
import io.sluice.SlidingLog;
import java.util.Arrays;

/**
 * {@code sliding_log}: an exact log of events, ClassDojo's rolling-rate-limiter.
 *
 * <h2>Model</h2>
 *
 * The log holds the times of the permits charged so far. At time {@code now} the window is the half-open
 * interval {@code (now − W, now]}: an entry at exactly {@code now − W} has left it (ClassDojo removes scores up
 * to and including {@code now − interval}, {@code src/index.ts} in peterkhayes/rolling-rate-limiter). A
 * request for {@code p} permits is admitted when
 * <pre>
 *   inWindow + p &lt;= limit   and   (minGap == 0 or the log is empty or now − newest &gt;= minGap)
 * </pre>
 * and then appends {@code p} permits at {@code now}. ClassDojo logs every attempt, blocked or not
 * ("if a user is continually attempting actions more quickly than the allowed rate, all of their actions will
 * be blocked until they pause"); here that is {@code countRejected}, and without it only admitted permits are
 * logged. Every interval of length W, wherever it starts, therefore holds at most {@code limit} admitted
 * permits: at the last admission {@code t} of an interval {@code [a, a + W)} the window {@code (t − W, t]}
 * covers {@code [a, t]}, and the check counted all of it.
 *
 * <h2>Worked example</h2>
 *
 * <pre>
 *   limit 3, W = 10 s, minGap = 1 s
 *   t = 0.0 s  +1  admitted              log {0}
 *   t = 0.5 s  +1  rejected (gap)        retry after 0.5 s (gap), remaining 2
 *   t = 1.0 s  +2  admitted              log {0, 1 x2}
 *   t = 9.0 s  +1  rejected (count)      3 + 1 &gt; 3; retry after 1 s: the entry at 0 leaves at 10 s
 *   t = 10.0 s +1  admitted              log {1 x2, 10}   (0 is at now − W: out)
 *
 *   window at 10 s:  (0 s ........................ 10 s]
 *                     x  xx                          x
 *                     ^ gone   ^ in                  ^ in
 * </pre>
 *
 * <h2>State</h2>
 *
 * {@code log} = pairs {@code (time, permits)}, oldest first, times strictly increasing, permits &gt;= 1.
 * Permits charged at the same microsecond are one entry with their sum, so events at the same microsecond
 * never collapse into one: they add up. This is also what makes the Lua port's sorted set safe: the member
 * is {@code "<time>:<permits>"}, unique because times are unique, scored by time, so ZREMRANGEBYSCORE prunes
 * the window; merging a same-microsecond request is ZREM of the old member plus ZADD of the new one. (The
 * classic bug of a member equal to the timestamp, where two events in one millisecond overwrite each other,
 * cannot happen.)
 *
 * <h2>The log keeps only the newest {@code limit} permits</h2>
 *
 * After each write the oldest permits beyond the newest {@code limit} are dropped (the oldest kept entry may be
 * trimmed). Claim: no decision of this limit, at any later time, can tell the capped log from the full one.
 * View the log as a sequence of single permits sorted by time; the window at any {@code t} is a suffix of it.
 * <ul>
 *   <li>Admission ({@code p >= 1}; {@code p == 0} always passes). If no dropped permit is in the window both
 *       logs count the same. If one is, the whole kept part is newer and also in it, so the full count is
 *       {@code > limit} and the capped count is {@code limit}: both reject.
 *   <li>{@code remaining = max(0, limit − count)}: equal when no dropped permit is in the window, 0 for both
 *       otherwise.
 *   <li>The gap rule, {@code resetAfter} and {@link #expiresAt} read only the newest entry, which is kept.
 *   <li>{@code retryAfter} waits for the {@code (limit − p + 1)}-th newest permit to leave the window; for
 *       {@code p >= 1} that permit is among the newest {@code limit}, so it is kept.
 * </ul>
 * Hence memory is at most {@code limit} entries. Without {@code countRejected} the log never exceeds
 * {@code limit} anyway (admission checked it); the cap matters for logged rejections and for a lowered
 * limit. It does not hold across a raised limit: permits dropped under the old limit are not there to be
 * judged by the new one, so a raised limit may admit a little earlier than a full log would.
 *
 * <h2>Decision</h2>
 *
 * Durations are measured from {@code t = max(now, newest)} (a clock behind the log means no time passed).
 * <ul>
 *   <li>{@code retryAfter}, on the state the store commits when rejecting (with {@code countRejected} it
 *       includes this attempt, so this is ClassDojo's {@code millisecondsUntilAllowed}), is the larger of
 *       two waits that only shrink as time passes: until the {@code (inWindow + p − limit)}-th oldest permit
 *       leaves ({@code time + W − t}), and until the gap after the newest entry is over
 *       ({@code newest + minGap − t}).
 *   <li>{@code remaining = max(0, limit − inWindow)} of that state, ignoring the gap, like ClassDojo's
 *       {@code actionsRemaining}; a request blocked only by the gap shows {@code remaining > 0} and a retry-after.
 *   <li>{@code resetAfter = newest + W − t}, when the log is empty again; {@link #expiresAt} is
 *       {@code newest + W} (the gap is over by then too, as {@code minGap <= W}).
 * </ul>
 *
 * <h2>Arithmetic</h2>
 *
 * Times are at most {@code 2^53}, counts at most {@code limit + p <= 2·10^6}; {@code newest + W} may pass 2^53
 * only in {@link #expiresAt}, and durations computed as {@code W − (t − time)} stay below it in Lua.
 *
 * <h2>Deliberate differences from ClassDojo</h2>
 *
 * Requests may ask for several permits (ClassDojo: one action each). Logging rejected attempts is an option.
 * An inspection ({@code permits == 0}) always passes and logs nothing; ClassDojo's {@code wouldLimit} is a
 * step for one permit whose state is not committed. ClassDojo also reports a wait for admitted actions (until
 * the next one could pass); here retry-after is 0 when admitted, as the SPI defines it. Parameter changes
 * keep the log minus the entries that had already left the old window at the time of the change, so the
 * outcome does not depend on whether a store already dropped an expired state.
 */
final class SlidingLogAlgorithm implements Algorithm<SlidingLogAlgorithm.State>, Settleable<SlidingLogAlgorithm.State> {

    /**
     * @param log pairs {@code (time, permits)}, oldest first, times strictly increasing, permits &gt;= 1,
     *            at most {@code limit} permits in all after a write
     */
    record State(long[] log) {
        @Override
        public boolean equals(Object o) {
            return o instanceof State s && Arrays.equals(log, s.log);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(log);
        }

        @Override
        public String toString() {
            return "State" + Arrays.toString(log);
        }
    }

    private final SlidingLog limit;
    private final long window;
    private final long minGap;

    SlidingLogAlgorithm(SlidingLog limit) {
        this.limit = limit;
        this.window = Arith.micros(limit.window());
        this.minGap = Arith.micros(limit.minGap());
    }

    @Override
    public Limit limit() {
        return limit;
    }

    @Override
    public Step<State> step(State state, long now, long permits, long maxWaitMicros) {
        long t = clock(state, now);
        long[] log = inWindow(state, t, window);
        long count = total(log);
        State recorded = permits == 0 ? state : new State(capped(appended(log, t, permits)));
        State rejected = limit.countRejected() ? recorded : state;
        if (permits == 0 || (count + permits <= limit.limit() && gapOver(log, t))) {
            long[] after = permits == 0 ? log : recorded.log();
            return Step.allow(0, remaining(total(after)), resetAfter(after, t), recorded, rejected);
        }
        long[] left = rejected == state ? log : rejected.log();
        return Step.reject(remaining(total(left)), retryAfter(left, t, permits), resetAfter(left, t), rejected);
    }

    @Override
    public long grantable(State state, long now, long permits) {
        long t = clock(state, now);
        long[] log = inWindow(state, t, window);
        if (!gapOver(log, t)) {
            return 0;
        }
        return Math.max(0, Math.min(permits, limit.limit() - total(log)));
    }

    @Override
    public long expiresAt(State state) {
        return newest(state.log()) + window;
    }

    /** Keeps the log, minus what had already left the previous window at {@code now}. */
    @Override
    public State migrate(State state, Limit previous, long now) {
        if (!(previous instanceof SlidingLog before)) {
            throw new IllegalArgumentException("previous must be a SlidingLog, was " + previous);
        }
        if (state == null) {
            return null;
        }
        long[] log = inWindow(state, clock(state, now), Arith.micros(before.window()));
        return log.length == 0 ? null : new State(log);
    }

    /** The smallest wait after which {@code permits} pass against {@code log} if nothing else happens. */
    private long retryAfter(long[] log, long t, long permits) {
        long wait = 0;
        long excess = total(log) + permits - limit.limit();
        long seen = 0;
        for (int i = 0; i < log.length && excess > 0; i += 2) {
            seen += log[i + 1];
            if (seen >= excess) {
                wait = log[i] + window - t;
                break;
            }
        }
        if (minGap > 0 && log.length > 0) {
            wait = Math.max(wait, newest(log) + minGap - t);
        }
        return wait;
    }

    private boolean gapOver(long[] log, long t) {
        return minGap == 0 || log.length == 0 || t - newest(log) >= minGap;
    }

    private long resetAfter(long[] log, long t) {
        return log.length == 0 ? 0 : newest(log) + window - t;
    }

    private long remaining(long counted) {
        return Math.max(0, limit.limit() - counted);
    }

    /** Drops the oldest permits beyond the newest {@code limit}; see the essay for why that is invisible. */
    private long[] capped(long[] log) {
        long excess = total(log) - limit.limit();
        if (excess <= 0) {
            return log;
        }
        int i = 0;
        while (log[i + 1] <= excess) {
            excess -= log[i + 1];
            i += 2;
        }
        long[] kept = Arrays.copyOfRange(log, i, log.length);
        kept[1] -= excess;
        return kept;
    }

    /** A now before the newest entry counts as no time passed. */
    private static long clock(State state, long now) {
        return state == null || state.log().length == 0 ? now : Math.max(now, newest(state.log()));
    }

    /** The entries in {@code (t − window, t]}; t is never before the newest entry. */
    private static long[] inWindow(State state, long t, long window) {
        return state == null ? TimedCounts.EMPTY : TimedCounts.after(state.log(), t - window);
    }

    private static long total(long[] log) {
        long sum = 0;
        for (int i = 1; i < log.length; i += 2) {
            sum += log[i];
        }
        return sum;
    }

    private static long newest(long[] log) {
        return log[log.length - 2];
    }

    /** The log with {@code permits} more at t, merged into the newest entry when it is at t too. */
    private static long[] appended(long[] log, long t, long permits) {
        return log.length > 0 && newest(log) == t
                ? TimedCounts.addedToNewest(log, permits)
                : TimedCounts.appended(log, t, permits);
    }

    /*
     * Settling a ticket (Settleable). The mark is the time of the entry the charge went into (its permits may
     * share it with other requests of the same microsecond). A refund removes that many permits from the entry
     * while it is in the window (an entry at 0 leaves the log); the log is then exactly the one the final cost
     * would have written, so every window still holds at most the limit. The gap rule reads the newest entry:
     * if the refund removes it, the gap is measured from the entry before, as if the charge had cost nothing.
     * An entry that has left the window counts nowhere: nothing to give back. An extra charge appends the
     * permits at now, past the limit if need be, then the log is capped as after every write.
     */
    @Override
    public long mark(State admitted, long now) {
        return newest(admitted.log());
    }

    @Override
    public State settle(State state, long now, long mark, long estimate, long actual) {
        long t = clock(state, now);
        long[] log = inWindow(state, t, window);
        if (actual > estimate) {
            return new State(capped(appended(log, t, actual - estimate)));
        }
        int i = actual < estimate ? TimedCounts.indexOf(log, mark) : -1;
        if (i < 0) {
            return state;
        }
        long[] after = TimedCounts.lowered(log, i, estimate - actual);
        return after.length == 0 ? null : new State(after);
    }
}
