package io.sluice.internal.algorithm;

import io.sluice.Limit;
import io.sluice.SlidingWindow;

/**
 * {@code sliding_window}: Cloudflare's two-counter estimate of a sliding log.
 *
 * <h2>Model</h2>
 *
 * Windows are epoch-aligned, {@code [k·W, (k+1)·W)}. Keep the admitted permits of the current window
 * ({@code current}) and of the one before ({@code previous}). At {@code elapsed} microseconds into the
 * current window, the sliding window {@code (now − W, now]} still overlaps {@code W − elapsed} of the previous
 * window; assuming its permits were spread evenly, it holds about {@code previous · (W − elapsed) / W} of them:
 * <pre>
 *   estimate = floor(previous · (W − elapsed) / W) + current        admit when estimate + p &lt;= limit
 * </pre>
 * (Cloudflare, "How we built rate limiting capable of scaling to millions of domains", 2017; the formula with
 * rounding down is the one in Alex Xu's System Design Interview, ch. 4.) Only admitted permits are counted.
 * Since {@code estimate >= current}, an aligned window never admits more than {@code limit}; a sliding
 * interval can, when the previous window's permits were bunched at its end.
 *
 * <pre>
 *   limit 7, W = 60 s; previous window 5, current 3; now 18 s (30 %) into the current window
 *
 *   |------ previous: 5 ------|------ current: 3 ----|
 *                 |&lt;-------- sliding window (60 s) --------&gt;|
 *                 42 s of previous (70 %)      18 s
 *
 *   estimate = floor(5 · 42 / 60) + 3 = floor(3.5) + 3 = 6;  6 + 1 &lt;= 7: admitted, current = 4
 *   the next request: floor(3.5) + 4 = 7; 7 + 1 &gt; 7: rejected, retry after 6 s + 1 µs (below)
 * </pre>
 *
 * <h2>State and invariants</h2>
 *
 * {@code (windowStart, previous, current)}: the aligned start of the window {@code current} belongs to, and the
 * two counts. On a request at {@code t} in window {@code start}: the same window keeps both counts; the next one
 * shifts ({@code previous = current, current = 0}); any later one starts from zero. A stored state has
 * {@code current > 0} (inspections store nothing), both counts are at most {@code MAX_COUNT} (each admission
 * kept {@code current <= limit}), and a {@code t} before {@code windowStart} counts as {@code windowStart}
 * (no time passed).
 *
 * <h2>Retry-after: the exact smallest wait</h2>
 *
 * With nothing else happening the estimate only decreases: inside a window the previous weight decays, and at a
 * roll-over the estimate drops from {@code floor(previous·(W−(W−1))/W) + current} to {@code current}. So the
 * first passing time is found window by window. In the current window, with {@code b = limit − p − current}
 * (no time in this window passes if {@code b < 0}), we need
 * <pre>
 *   floor(previous·(W − e)/W) &lt;= b
 *     ⇔  previous·(W − e) &lt; (b + 1)·W
 *     ⇔  e &gt;= W + 1 − ceil((b + 1)·W / previous)
 * </pre>
 * ({@code e = 0} when {@code previous <= b}, which also keeps the quotient at most W) and the answer is that
 * {@code e} if it is below W. Otherwise it is in the next window, where the previous count is our
 * {@code current} and the current is 0: the same formula with {@code b = limit − p} (never negative) and
 * {@code current} in place of {@code previous}; an {@code e} of W there is the start of the window after, where
 * the estimate is 0. Example above, in microseconds: {@code b = 7 − 1 − 4 = 2},
 * {@code e = 60·10^6 + 1 − ceil(3 · 60·10^6 / 5) = 24 s + 1 µs}: at exactly 24 s {@code floor(5·36/60) = 3}
 * still makes 7, one microsecond later it is 2. The retry-after at 18 s is 6 s + 1 µs. A request of more than
 * {@code limit} permits never passes (the estimate is never below 0, and the formula above would take a
 * negative {@code b + 1}): its retry-after is {@link Arith#NEVER}, as for every algorithm.
 *
 * <h2>Reset and expiry: when both counts are out of the picture</h2>
 *
 * A count {@code c} that is the previous window's, for the window starting at {@code s}, contributes
 * {@code floor(c·(W − e)/W)}, which is 0 from {@code e = W + 1 − ceil(W / c)} on. So the state means nothing
 * from {@code windowStart + 2W + 1 − ceil(W/current)} on (or {@code windowStart + W + 1 − ceil(W/previous)}
 * when {@code current = 0}): from there every decision, and the state it leaves, match those of no state.
 * That instant is {@link #expiresAt}, and {@code resetAfter} is the time until it for the state after the
 * decision. It is exact: one microsecond earlier the estimate is at least 1. "The state it leaves" needs care:
 * rolled one window on, an expired {@code current} would become a {@code previous} that weighs nothing at
 * that time but weighs again at the start of the window, which a clock stepping back reaches; so a request at
 * or after {@link #expiresAt} starts from zero counts, exactly as from no state.
 *
 * <h2>Arithmetic (and the Lua port)</h2>
 *
 * The products {@code previous · (W − e)} and {@code (b + 1) · W} reach {@code 10^12 · 3.2·10^13 ≈ 2^85}: past
 * 2^63 in Java (hence {@link Arith#mulDivFloor} / {@link Arith#mulDivCeil}, exact via 128-bit products) and
 * far past 2^53 in Lua. The quotients themselves are small: at most {@code previous}, and at most W.
 * A Lua port must not evaluate {@code math.floor(a * b / c)} in doubles: the product rounds, and even an exact
 * {@code x / c} can round up to the next integer when {@code x} is a large multiple of {@code c} minus a little,
 * so floor is off by one. Exact recipe, with every intermediate below 2^53: split {@code a} and {@code b} into
 * 24-bit limbs, form the product as base-2^24 columns (each partial product below 2^48, each column sum below
 * 2^50), then long-divide by {@code c < 2^45} eight bits at a time (remainder {@code < c}, so
 * {@code remainder · 2^8 + byte < 2^53}); the ceiling adds 1 when the final remainder is non-zero. When
 * {@code a · b < 2^53} a shortcut is exact: {@code (x − math.fmod(x, c)) / c} with {@code x = a · b}
 * (not Lua's {@code %}, which is defined through a rounded division). Everything else (times up to 2^53 +
 * 2W in {@link #expiresAt} only, counts up to 2·10^12) is plain.
 *
 * <h2>Absorbing permits admitted elsewhere (synced mode)</h2>
 *
 * In {@link io.sluice.Mode#synced} each node admits against its last view of the shared counts and later pushes
 * "{@code p} permits admitted at {@code a}" into them ({@link #absorb}), counted whatever the limit says (they
 * were admitted already). At the store's time {@code t} (state clamped as in {@code step}; {@code a} taken as
 * {@code min(a, t)}, since nothing was admitted in the future), with {@code start} the aligned window of
 * {@code t} and {@code from} the aligned window of {@code a}:
 * <ul>
 *   <li>{@code from == start}: added to {@code current};
 *   <li>{@code from == start − W}: added to {@code previous}, the window the estimate still weighs;
 *   <li>earlier ({@code t >= from + 2W = absorbableUntil(a)}): dropped. Such a count would be the previous
 *       window's of a window that is over, and weighs nothing at {@code t} or later.
 * </ul>
 * The counts are those of {@code rolled(state, t)}: after any sequence of absorbs, in any order of arrival, the
 * state at {@code t} holds the permits admitted in the current and the previous aligned window, which is all
 * the estimate reads — with one exception, kept so that an expired state still means no state (stores drop
 * it): once a previous-window count has faded to nothing ({@code floor(c·(W − e)/W) = 0}, so
 * {@code c·(W − e)/W < 1}) the state expires and the count is forgotten, and permits absorbed into that window
 * later weigh without it. The estimate is then lower than the model's by less than one permit per such
 * expiry, and it takes permits arriving more than {@code fadesAt(c)} into the next window to matter at all.
 * Absorbing permits admitted now is charging them: {@code absorb(s, t, p, t)} is the state
 * {@code step(s, t, p, 0)} commits when it admits (for a {@code t} not before the state's window).
 *
 * <p>Invariants change in one way: an absorbed previous-window count can leave {@code current == 0} with
 * {@code previous > 0}, a state {@link #expiresAt} already covers ({@code windowStart + fadesAt(previous)}); it
 * may even be expired at {@code t} when the previous window's weight has already faded, and stores drop it.
 * Counts saturate at {@link #COUNT_CEILING} = {@code MAX_COUNT + 1}, so the estimate's products stay within the
 * exact arithmetic above. A saturated current count rejects exactly as the true one; a saturated previous count
 * could fade earlier than the true one, which needs more than 10^12 permits admitted in one window — beyond what
 * any node admits under a valid limit.
 *
 * <h2>Deliberate differences from Cloudflare</h2>
 *
 * Cloudflare computes the estimate in floating point; here it is rounded down to a whole permit, so the limit
 * admits while the real-valued estimate plus the request is below {@code limit + 1}. Requests may ask for
 * several permits. Windows are any whole number of microseconds.
 */
final class SlidingWindowAlgorithm implements SyncableAlgorithm<SlidingWindowAlgorithm.State>, Settleable<SlidingWindowAlgorithm.State> {

    /** Where absorbed counts saturate: above every valid limit (see the essay, "Absorbing"). */
    static final long COUNT_CEILING = Limit.MAX_COUNT + 1;

    /**
     * @param windowStart aligned start of the window {@code current} counts
     * @param previous    admitted permits in {@code [windowStart − W, windowStart)}
     * @param current     admitted permits in {@code [windowStart, windowStart + W)}
     */
    record State(long windowStart, long previous, long current) {}

    private final SlidingWindow limit;
    final long window;
    private final SlidingWindowInPlace inPlace;

    SlidingWindowAlgorithm(SlidingWindow limit) {
        this.limit = limit;
        this.window = Arith.micros(limit.window());
        this.inPlace = new SlidingWindowInPlace(this, limit);
    }

    @Override
    public InPlaceStep<State> inPlace() {
        return inPlace;
    }

    @Override
    public Limit limit() {
        return limit;
    }

    @Override
    public Step<State> step(State state, long now, long permits, long maxWaitMicros) {
        long t = state == null ? now : Math.max(now, state.windowStart());
        State seen = rolled(state, t);
        long elapsed = t - seen.windowStart();
        long estimate = estimate(seen, elapsed);
        if (permits == 0 || estimate + permits <= limit.limit()) {
            State admitted = permits == 0
                    ? state
                    : new State(seen.windowStart(), seen.previous(), seen.current() + permits);
            State after = permits == 0 ? seen : admitted;
            return Step.allow(0, remaining(estimate + permits), untilGone(after, t), admitted, state);
        }
        return Step.reject(remaining(estimate), retryAfter(seen, elapsed, permits), untilGone(seen, t), state);
    }

    @Override
    public long grantable(State state, long now, long permits) {
        long t = state == null ? now : Math.max(now, state.windowStart());
        State seen = rolled(state, t);
        long estimate = estimate(seen, t - seen.windowStart());
        return Math.max(0, Math.min(permits, limit.limit() - estimate));
    }

    @Override
    public long expiresAt(State state) {
        return expiresAt(state.windowStart(), state.previous(), state.current());
    }

    /** {@link #expiresAt(State)} of the state (windowStart, previous, current). */
    long expiresAt(long windowStart, long previous, long current) {
        if (current > 0) {
            return windowStart + window + fadesAt(current);
        }
        return previous > 0 ? windowStart + fadesAt(previous) : windowStart;
    }

    /** Keeps both counts when only the limit changed; a new window length restarts counting. */
    @Override
    public State migrate(State state, Limit previous, long now) {
        if (!(previous instanceof SlidingWindow before)) {
            throw new IllegalArgumentException("previous must be a SlidingWindow, was " + previous);
        }
        return Arith.micros(before.window()) == window ? state : null;
    }

    /** See the essay, "Absorbing permits admitted elsewhere". */
    @Override
    public State absorb(State state, long now, long permits, long admittedAt) {
        long t = state == null ? now : Math.max(now, state.windowStart());
        long a = Math.min(admittedAt, t);
        long start = t - t % window;
        long from = a - a % window;
        if (permits == 0 || start - from > window) {
            return state;
        }
        State seen = rolled(state, t);
        if (from == start) {
            return new State(start, seen.previous(), Math.min(COUNT_CEILING, seen.current() + permits));
        }
        return new State(start, Math.min(COUNT_CEILING, seen.previous() + permits), seen.current());
    }

    @Override
    public long absorbableUntil(long admittedAt) {
        return admittedAt - admittedAt % window + 2 * window;
    }

    @Override
    public long windowStart(State state) {
        return state.windowStart();
    }

    @Override
    public long[] fields(State state) {
        return new long[] {state.windowStart(), state.previous(), state.current()};
    }

    @Override
    public State state(long[] fields) {
        if (fields.length != 3 || fields[1] < 0 || fields[2] < 0) {
            throw new IllegalArgumentException("a sliding_window state is (windowStart, previous >= 0, current >= 0),"
                    + " was " + java.util.Arrays.toString(fields));
        }
        return new State(fields[0], fields[1], fields[2]);
    }

    /**
     * The counts as seen from the aligned window containing t (t is never before the state's window). An
     * expired state is no state: its counts weigh nothing at t, but kept as the previous count they would weigh
     * again for a clock stepping back towards this window's start, which a store that dropped the state would
     * not see. (That also covers a t two windows on or more, as expiresAt is at most windowStart + 2W.)
     */
    private State rolled(State state, long t) {
        long start = t - t % window;
        if (state == null || t >= expiresAt(state)) {
            return new State(start, 0, 0);
        }
        if (start == state.windowStart()) {
            return state;
        }
        return new State(start, state.current(), 0);
    }

    private long estimate(State s, long elapsed) {
        return estimate(s.previous(), s.current(), elapsed);
    }

    long estimate(long previous, long current, long elapsed) {
        return Arith.mulDivFloor(previous, window - elapsed, window) + current;
    }

    /** See the essay: first the rest of the current window, else the next one. */
    private long retryAfter(State s, long elapsed, long permits) {
        return retryAfter(s.previous(), s.current(), elapsed, permits);
    }

    long retryAfter(long previous, long current, long elapsed, long permits) {
        if (permits > limit.limit()) {
            return Arith.NEVER;     // no window ever admits more than the limit: waiting never helps
        }
        long budget = limit.limit() - permits - current;
        if (budget >= 0 && previous > 0) {
            long e = firstPassing(previous, budget);
            if (e < window) {
                return e - elapsed;
            }
        }
        long next = current == 0 ? 0 : firstPassing(current, limit.limit() - permits);
        return window - elapsed + next;
    }

    /**
     * The smallest offset {@code e} in [0, W] with {@code floor(count·(W − e)/W) <= budget}, for a count that is
     * the previous window's.
     */
    private long firstPassing(long count, long budget) {
        if (count <= budget) {
            return 0;
        }
        return window + 1 - Arith.mulDivCeil(budget + 1, window, count);
    }

    /** Offset into the next window from which {@code count}, as the previous window's, contributes 0. */
    private long fadesAt(long count) {
        return window + 1 - Arith.ceilDiv(window, count);
    }

    /** Time from t until the state means nothing any more. */
    private long untilGone(State s, long t) {
        return untilGone(s.windowStart(), s.previous(), s.current(), t);
    }

    long untilGone(long windowStart, long previous, long current, long t) {
        return previous == 0 && current == 0 ? 0 : Math.max(0, expiresAt(windowStart, previous, current) - t);
    }

    long remaining(long counted) {
        return Math.max(0, limit.limit() - counted);
    }

    /*
     * Settling a ticket (Settleable). The mark is the aligned start of the window whose count the charge
     * raised. At now that window is either still current (the refund lowers `current`), the previous one (it
     * lowers `previous`, which still weighs in the estimate), or gone (nothing to give back: the charge no
     * longer counts). Each count stays the sum of what its charges cost in the end, so the estimate is the
     * one the final costs would have given and an aligned window still never admits more than the limit. Both
     * counts 0 is no state. An extra charge adds to the current window's count, past the limit if need be.
     */
    @Override
    public long mark(State admitted, long now) {
        return admitted.windowStart();
    }

    @Override
    public State settle(State state, long now, long mark, long estimate, long actual) {
        long t = state == null ? now : Math.max(now, state.windowStart());
        State seen = rolled(state, t);
        if (actual > estimate) {
            return new State(seen.windowStart(), seen.previous(),
                    Math.min(COUNT_CEILING, seen.current() + (actual - estimate)));
        }
        long refund = estimate - actual;
        State after;
        if (refund == 0) {
            return state;
        } else if (seen.windowStart() == mark) {
            after = new State(mark, seen.previous(), Math.max(0, seen.current() - refund));
        } else if (seen.windowStart() - window == mark) {
            after = new State(seen.windowStart(), Math.max(0, seen.previous() - refund), seen.current());
        } else {
            return state;
        }
        return after.previous() == 0 && after.current() == 0 ? null : after;
    }
}
