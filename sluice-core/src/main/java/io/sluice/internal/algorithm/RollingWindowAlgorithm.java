package io.sluice.internal.algorithm;

import io.sluice.Limit;
import io.sluice.RollingWindow;
import java.util.Arrays;

/**
 * {@code rolling_window}: the bucketed rolling window of Istio mixer's redisquota adapter.
 *
 * <h2>Reference</h2>
 *
 * istio/istio {@code mixer/adapter/redisquota/rolling_window.go} (the Lua script that replaced the per-request
 * sorted set, istio/old_mixer_repo "Improve rolling-window implementation for Redis adapter"). Its state is a
 * hash {@code token} (permits charged in the window), {@code bucket.token}, {@code bucket.timestamp} (the open
 * bucket) and a sorted set of closed buckets scored by their start. Per call at {@code timestamp}:
 * <ol>
 *   <li>if {@code timestamp − bucket.timestamp + 1 > bucketLength}, the open bucket is closed (added to the set
 *       if it holds tokens) and a new one opens at {@code timestamp};
 *   <li>closed buckets with start {@code <= timestamp − windowLength} are removed and their tokens reclaimed;
 *   <li>{@code available = credit − token}: grant all when {@code available >= token requested}, else in
 *       best-effort mode grant {@code available} if positive, else nothing.
 * </ol>
 *
 * <h2>The same thing in integer microseconds</h2>
 *
 * A bucket is {@code (start, count)}. It accepts permits at times {@code t} with {@code t − start < B} (step 1
 * above, B the bucket length) and counts toward the window while {@code t < start + W} (step 2; the open
 * bucket never needs the test, as {@code B <= W}). Used permits are the sum over live buckets; admit when
 * {@code used + p <= limit}. {@link #grantable} is Istio's best effort: {@code min(p, max(0, limit − used))}.
 *
 * <pre>
 *   limit 10, W = 100 s, B = 10 s (Istio's own test case, redisquota_test.go TestHandleQuota)
 *   t=  0  +3 ok   buckets [0:3]                  used 3
 *   t=  1  +3 ok   [0:6]                          used 6
 *   t= 10  +3 ok   [0:6, 10:3]   (10 − 0 &gt;= B: new bucket)
 *   t= 11  +3 no   9 + 3 &gt; 10; retry after 89 s (bucket 0 leaves at 100 s)
 *   t=100  +3 ok   bucket 0 left: [10:3, 100:3]   used 6
 *
 *   |--bucket 0--|--bucket 10--|        ...        |--bucket 100--|
 *   0            10            20                 100
 *   a permit taken at 9.999 s lives until 100 s: W − B + 1 µs at least, W at most
 * </pre>
 *
 * <h2>Invariants</h2>
 *
 * <ul>
 *   <li>State {@code buckets} = pairs {@code (start, count)}, oldest first; each count &gt;= 1; starts strictly
 *       increasing and, under one bucket length, at least B apart (a bucket opens only when
 *       {@code t − newest >= B}). Live starts lie in {@code (t − W, t]}, so there are at most
 *       {@code ceil(W / B) <= W / B + 1} of them.
 *   <li>Guarantee: the admitted permits at any times {@code u_1 <= ... <= u_k} with {@code u_k − u_1 <= W − B}
 *       sum to at most {@code limit}. Proof: the permits admitted at {@code u_i} went into a bucket with start
 *       {@code s > u_i − B >= u_1 − B >= u_k − W}, so it is still live at {@code u_k}, where the admission
 *       check counted it. So every interval of length {@code W − B + 1} µs (closed, {@code [a, a + W − B]}),
 *       hence every interval of length {@code W − B}, holds at most {@code limit}. Conversely the count is a
 *       subset of what an exact log over {@code (t − W, t]} would count, so this never rejects what that log
 *       would admit.
 *   <li>{@code used <= MAX_COUNT} always: every admission kept it at most the limit of the time.
 * </ul>
 *
 * <h2>Decision</h2>
 *
 * Times are taken as {@code t = max(now, newest start)}: a clock behind the state means no time passed, and
 * then the permits join the newest bucket. {@code retryAfter}: drop live buckets oldest first until
 * {@code used' + p <= limit}; the wait is until the last dropped one expires, {@code start + W − t}, exact
 * because nothing else changes {@code used} in between. {@code resetAfter = newest start + W − t}; and
 * {@link #expiresAt} is {@code newest start + W}, when every bucket has expired.
 *
 * <h2>Deliberate differences from Istio</h2>
 *
 * <ul>
 *   <li>Only recorded permits open buckets. Istio also opens an (empty) bucket on a call that is rejected or
 *       asks for 0 tokens; here a rejected or inspecting request must leave the state unchanged, so the next
 *       admitted request opens the bucket at its own time instead. For a sequence of admitted requests the two
 *       are identical; otherwise ours holds the permits up to one bucket longer, never shorter, so the
 *       guarantee is unaffected.
 *   <li>The request id deduplication, nanosecond timestamps, and the clamping of a negative {@code token}
 *       ("error situation") have no counterpart: the used count is the sum of live buckets, never stored.
 *       Istio refreshes the expiry of its meta key twice and never sets one on the bucket set; here the store
 *       drops the whole state at {@link #expiresAt}.
 *   <li>Istio requires {@code bucket < window}; here {@code bucket = window} is allowed (a window that starts
 *       at the first request, like {@code fixed_window} with {@code FIRST_REQUEST}).
 *   <li>A parameter change keeps the buckets that had not yet expired under the previous window at the time
 *       of the change, so the result does not depend on whether a store already dropped an expired state.
 * </ul>
 *
 * <h2>Arithmetic</h2>
 *
 * Starts are at most 2^53, counts and their sum at most {@code MAX_COUNT}, so every stored value and every
 * sum is exact in Lua; {@code start + W} passes 2^53 only in {@link #expiresAt}. The Lua port may keep the
 * buckets as Istio does (a sorted set scored by start with unique members {@code "<start>:<count>"}, unique
 * because starts are) or as one flat list.
 */
final class RollingWindowAlgorithm implements Algorithm<RollingWindowAlgorithm.State>, Settleable<RollingWindowAlgorithm.State> {

    /** @param buckets pairs {@code (start, count)}, oldest first, starts strictly increasing, counts &gt;= 1 */
    record State(long[] buckets) {
        @Override
        public boolean equals(Object o) {
            return o instanceof State s && Arrays.equals(buckets, s.buckets);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(buckets);
        }

        @Override
        public String toString() {
            return "State" + Arrays.toString(buckets);
        }
    }

    private final RollingWindow limit;
    private final long window;
    private final long bucket;

    RollingWindowAlgorithm(RollingWindow limit) {
        this.limit = limit;
        this.window = Arith.micros(limit.window());
        this.bucket = Arith.micros(limit.bucket());
    }

    @Override
    public Limit limit() {
        return limit;
    }

    @Override
    public Step<State> step(State state, long now, long permits, long maxWaitMicros) {
        long t = clock(state, now);
        long[] live = live(state, t, window);
        long used = total(live);
        if (permits == 0 || used + permits <= limit.limit()) {
            State admitted = permits == 0 ? state : new State(charged(live, t, permits));
            long[] after = permits == 0 ? live : admitted.buckets();
            return Step.allow(0, remaining(used + permits), resetAfter(after, t), admitted, state);
        }
        return Step.reject(remaining(used), retryAfter(live, t, used, permits), resetAfter(live, t), state);
    }

    /** Istio's best effort: what is left of the limit, at most {@code permits}. */
    @Override
    public long grantable(State state, long now, long permits) {
        long used = total(live(state, clock(state, now), window));
        return Math.max(0, Math.min(permits, limit.limit() - used));
    }

    @Override
    public long expiresAt(State state) {
        return newest(state.buckets()) + window;
    }

    /** Keeps the buckets still live under the previous window; the new window and bucket apply from now on. */
    @Override
    public State migrate(State state, Limit previous, long now) {
        if (!(previous instanceof RollingWindow before)) {
            throw new IllegalArgumentException("previous must be a RollingWindow, was " + previous);
        }
        if (state == null) {
            return null;
        }
        long[] live = live(state, clock(state, now), Arith.micros(before.window()));
        return live.length == 0 ? null : new State(live);
    }

    /** Waits for the oldest buckets to expire until {@code permits} fit. */
    private long retryAfter(long[] live, long t, long used, long permits) {
        long excess = used + permits - limit.limit();
        int i = 0;
        while (live[i + 1] < excess) {
            excess -= live[i + 1];
            i += 2;
        }
        return live[i] + window - t;
    }

    /** The live buckets with {@code permits} added to the open one, or to a new one opened at t. */
    private long[] charged(long[] live, long t, long permits) {
        return live.length > 0 && t - newest(live) < bucket
                ? TimedCounts.addedToNewest(live, permits)
                : TimedCounts.appended(live, t, permits);
    }

    private long resetAfter(long[] buckets, long t) {
        return buckets.length == 0 ? 0 : newest(buckets) + window - t;
    }

    private long remaining(long used) {
        return Math.max(0, limit.limit() - used);
    }

    /** A now before the newest bucket counts as no time passed. */
    private static long clock(State state, long now) {
        return state == null || state.buckets().length == 0 ? now : Math.max(now, newest(state.buckets()));
    }

    /** The buckets with {@code start > t − window}. */
    private static long[] live(State state, long t, long window) {
        return state == null ? TimedCounts.EMPTY : TimedCounts.after(state.buckets(), t - window);
    }

    private static long total(long[] buckets) {
        long sum = 0;
        for (int i = 1; i < buckets.length; i += 2) {
            sum += buckets[i];
        }
        return sum;
    }

    private static long newest(long[] buckets) {
        return buckets[buckets.length - 2];
    }

    /*
     * Settling a ticket (Settleable). The mark is the start of the bucket the charge went into. A refund lowers
     * that bucket's count while the bucket is live (a bucket at 0 leaves the state); a bucket that has left the
     * window counts nowhere, so there is nothing to give back. The guarantee above is unchanged: every live
     * bucket still holds no more than the permits admitted into it (their final cost), and the admission
     * check counted them. An extra charge goes into the open bucket at now, as an admission would put it,
     * past the limit if need be.
     */
    @Override
    public long mark(State admitted, long now) {
        return newest(admitted.buckets());
    }

    @Override
    public State settle(State state, long now, long mark, long estimate, long actual) {
        long t = clock(state, now);
        long[] live = live(state, t, window);
        if (actual > estimate) {
            return new State(charged(live, t, actual - estimate));
        }
        int i = actual < estimate ? TimedCounts.indexOf(live, mark) : -1;
        if (i < 0) {
            return state;
        }
        long[] after = TimedCounts.lowered(live, i, estimate - actual);
        return after.length == 0 ? null : new State(after);
    }
}
