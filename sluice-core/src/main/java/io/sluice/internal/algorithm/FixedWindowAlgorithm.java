package io.sluice.internal.algorithm;

import io.sluice.FixedWindow;
import io.sluice.Limit;

/**
 * {@code fixed_window}: one counter per window, the INCRBY counter of envoyproxy/ratelimit.
 *
 * <h2>Model</h2>
 *
 * Time is cut into windows of length {@code W}; each window owns a counter that starts at zero. A request for
 * {@code p} permits is admitted when {@code count + p <= limit} and then adds {@code p}. Nothing is ever
 * subtracted: the counter is simply forgotten when its window ends. With {@link FixedWindow.Align#EPOCH}
 * the windows are {@code [k·W, (k+1)·W)} in microseconds since the Unix epoch, which is how envoyproxy/ratelimit
 * builds its cache key ({@code src/limiter/cache_key.go}: {@code (now / divider) * divider}); every process
 * that shares the key agrees on the window without talking. With {@link FixedWindow.Align#FIRST_REQUEST} a
 * window opens at the first request that gets recorded after the previous window ended, so a key that is used
 * once an hour gets a full window from its first request instead of the tail of an epoch window.
 *
 * <pre>
 *   limit 3, W = 10 s, EPOCH                     count
 *   t=  3 s  +1  admitted   window [0, 10)         1
 *   t=  8 s  +2  admitted                          3
 *   t=  9 s  +1  rejected, retry after 1 s         3
 *   t= 10 s  +3  admitted   window [10, 20)        3    &lt;- 6 permits within 3 s of each other
 *
 *         0 s                10 s                20 s
 *         |-----x-------xx-x-|xxx----------------|
 *                   3 per window, up to 2 x 3 across a boundary
 * </pre>
 *
 * <h2>State and invariants</h2>
 *
 * {@code (windowStart, count)}: the start of the window the counter belongs to and the permits charged in
 * it. A stored state always has {@code count > 0} (a pure inspection stores nothing), so a state means "a
 * window is open" and {@link #expiresAt} is its end {@code windowStart + W}: from then on the state decides
 * exactly like no state. Without {@code countRejected}, {@code count <= limit}; with it, rejected attempts add
 * their permits too (envoy increments its counter for every hit, admitted or not), so {@code count} may pass
 * {@code limit}. It saturates at {@link #COUNT_CEILING} = {@code MAX_COUNT + 1}: a count that high rejects
 * every request under any valid limit, so saturation never changes a decision, and the counter cannot grow
 * without bound under a client that hammers for a year-long window.
 *
 * <h2>Decision</h2>
 *
 * <ul>
 *   <li>{@code remaining = max(0, limit − count)} of the state the store would commit for this outcome: with
 *       {@code countRejected} a rejected attempt already holds the counter above the limit, so 0 (envoy also
 *       reports 0 remaining when over the limit).
 *   <li>{@code retryAfter = windowEnd − now} when rejected: the counter never goes down inside a window and a
 *       fresh window admits any request of at most {@code limit} permits, so this is exact.
 *   <li>{@code resetAfter = windowEnd − now} while the counter is non-zero, else 0.
 * </ul>
 * A fresh or expired {@code FIRST_REQUEST} state cannot reject (the count is 0 and {@code permits <= limit}),
 * so there is no retry-after to define for it; an inspection ({@code permits == 0}) there opens no window.
 *
 * <h2>Recording of rejected attempts</h2>
 *
 * With {@code countRejected} the {@code rejected} state holds the attempt even when this limit admitted it,
 * because the store commits {@code rejected} exactly when the request as a whole was turned away, and a
 * rejected attempt is what the option counts.
 *
 * <h2>Arithmetic</h2>
 *
 * Every stored value is below 2^53: {@code windowStart <= now <= 2^53}, {@code count <= MAX_COUNT + 1}.
 * {@code count + permits <= 2·10^12 + 1}. The window end can pass 2^53 (by at most 366 days) when {@code now}
 * is near {@link Arith#MAX_TIME}; it is only ever returned by {@link #expiresAt}. A Lua port computes the
 * durations as {@code W − (now − windowStart)}, whose intermediates stay below 2^53.
 *
 * <h2>Absorbing permits admitted elsewhere (synced mode)</h2>
 *
 * In {@link io.sluice.Mode#synced} each node admits against its last view of the shared counter and later pushes
 * "{@code p} permits admitted at {@code a}" into it ({@link #absorb}). They belong to the window that contained
 * {@code a}, and they are counted there whatever the limit says (they were admitted already). At the store's
 * time {@code t} (with {@code a} taken as {@code min(a, t)}: a node whose clock runs ahead cannot have admitted
 * in the future):
 * <ol>
 *   <li><b>Their window is over</b> ({@code t >= absorbableUntil(a)}): dropped. With {@code EPOCH} that window is
 *       the aligned {@code [a − a mod W, … + W)}; with {@code FIRST_REQUEST} every window containing {@code a}
 *       ends by {@code a + W}. A window that is over decides nothing any more, so the drop loses nothing.
 *   <li><b>A window is open at {@code t}</b>: added to it. With {@code EPOCH} it is the window of {@code a}
 *       (both contain {@code t}). With {@code FIRST_REQUEST} it can have opened after {@code a} (another node's
 *       push opened it first): the permits are charged to it, which errs on the side of rejecting — the
 *       window they would have opened at {@code a} overlaps it, and a store cannot tell which it was.
 *   <li><b>No window is open, and {@code a} fell in (or before) the state's window, now over</b>: dropped, as in
 *       1 (only possible with {@code FIRST_REQUEST}).
 *   <li><b>Otherwise</b>: they open the window {@code openingAt(a)}, as a request at {@code a} would have.
 * </ol>
 * So for {@code EPOCH} the count after any sequence of absorbs is exactly the permits admitted in the current
 * aligned window, in any order of arrival; and absorbing permits admitted now is charging them:
 * {@code absorb(s, t, p, t)} is the state {@code step(s, t, p, 0)} commits when it admits (both alignments;
 * for a {@code t} not before the state's window, where {@code step} would count {@code t} as the window start
 * while a push admitted before the window is a late arrival).
 * Counts saturate at {@link #COUNT_CEILING} as above, so an absorb never overflows.
 *
 * <h2>Deliberate differences from envoy</h2>
 *
 * Envoy counts rejected hits always; here that is the {@code countRejected} option (default off). Envoy's
 * windows are whole seconds to days; here any whole number of microseconds. Envoy's counter is a uint32.
 */
final class FixedWindowAlgorithm implements SyncableAlgorithm<FixedWindowAlgorithm.State>, Settleable<FixedWindowAlgorithm.State> {

    /** Where counts saturate: above every valid limit, so a saturated count rejects exactly as the true one. */
    static final long COUNT_CEILING = Limit.MAX_COUNT + 1;

    /**
     * @param windowStart start of the window the counter belongs to
     * @param count       permits charged in that window, in [1, {@link #COUNT_CEILING}]
     */
    record State(long windowStart, long count) {}

    private final FixedWindow limit;
    final long window;
    private final FixedWindowInPlace inPlace;

    FixedWindowAlgorithm(FixedWindow limit) {
        this.limit = limit;
        this.window = Arith.micros(limit.window());
        this.inPlace = new FixedWindowInPlace(this, limit);
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
        long t = clock(state, now);
        long count = countAt(state, t);
        long start = count > 0 ? state.windowStart() : openingAt(t);
        long untilEnd = start + window - t;
        State recorded = permits == 0 ? state : new State(start, Math.min(COUNT_CEILING, count + permits));
        State rejected = limit.countRejected() ? recorded : state;
        if (permits == 0 || count + permits <= limit.limit()) {
            long after = count + permits;
            return Step.allow(0, remaining(after), after > 0 ? untilEnd : 0, recorded, rejected);
        }
        // count > 0 here: a fresh window admits every request of at most limit permits.
        long charged = rejected == state ? count : rejected.count();
        return Step.reject(remaining(charged), untilEnd, untilEnd, rejected);
    }

    @Override
    public long grantable(State state, long now, long permits) {
        long count = countAt(state, clock(state, now));
        return Math.max(0, Math.min(permits, limit.limit() - count));
    }

    @Override
    public long expiresAt(State state) {
        return state.windowStart() + window;
    }

    /** Keeps the count when only the limit (or countRejected) changed; a new window length or alignment restarts. */
    @Override
    public State migrate(State state, Limit previous, long now) {
        if (!(previous instanceof FixedWindow before)) {
            throw new IllegalArgumentException("previous must be a FixedWindow, was " + previous);
        }
        boolean sameWindows = Arith.micros(before.window()) == window && before.align() == limit.align();
        return sameWindows ? state : null;
    }

    /** See the essay, "Absorbing permits admitted elsewhere": steps 1 to 4 in order. */
    @Override
    public State absorb(State state, long now, long permits, long admittedAt) {
        long t = clock(state, now);
        long a = Math.min(admittedAt, t);
        if (permits == 0 || t - openingAt(a) >= window) {
            return state;
        }
        long count = countAt(state, t);
        if (count > 0) {
            return new State(state.windowStart(), Math.min(COUNT_CEILING, count + permits));
        }
        if (state != null && a - state.windowStart() < window) {
            return state;
        }
        return new State(openingAt(a), Math.min(COUNT_CEILING, permits));
    }

    @Override
    public long absorbableUntil(long admittedAt) {
        return openingAt(admittedAt) + window;
    }

    @Override
    public long windowStart(State state) {
        return state.windowStart();
    }

    @Override
    public long[] fields(State state) {
        return new long[] {state.windowStart(), state.count()};
    }

    @Override
    public State state(long[] fields) {
        if (fields.length != 2 || fields[1] < 0) {
            throw new IllegalArgumentException("a fixed_window state is (windowStart, count >= 0), was "
                    + java.util.Arrays.toString(fields));
        }
        return new State(fields[0], fields[1]);
    }

    /** A now before the window start counts as no time passed. */
    private static long clock(State state, long now) {
        return state == null ? now : Math.max(now, state.windowStart());
    }

    /** The count of the window containing t: the state's count while its window lasts, else 0. */
    private long countAt(State state, long t) {
        return state != null && t < state.windowStart() + window ? state.count() : 0;
    }

    /** Where a window opened by a request at t starts. */
    long openingAt(long t) {
        return limit.align() == FixedWindow.Align.EPOCH ? t - t % window : t;
    }

    private long remaining(long charged) {
        return Math.max(0, limit.limit() - charged);
    }

    /*
     * Settling a ticket (Settleable). The mark is the start of the window the charge went into. A refund lowers
     * that window's count, and only while it is still the window counting at now: once it has ended its permits
     * count nowhere, and handing them to a later window would let that window admit more than its limit. So
     * every window's count stays the sum of what its charges cost in the end, and admission still keeps it at
     * most the limit. A count of 0 is no state (the next request opens a window, as for a new key; for EPOCH
     * alignment the same window). An extra charge goes to the window counting at now, opened if need be,
     * past the limit if need be (capped at COUNT_CEILING like every count): the key owes it, so that window
     * admits that much less.
     */
    @Override
    public long mark(State admitted, long now) {
        return admitted.windowStart();
    }

    @Override
    public State settle(State state, long now, long mark, long estimate, long actual) {
        long t = clock(state, now);
        long count = countAt(state, t);
        if (actual > estimate) {
            long start = count > 0 ? state.windowStart() : openingAt(t);
            return new State(start, Math.min(COUNT_CEILING, count + (actual - estimate)));
        }
        if (actual == estimate || count == 0 || state.windowStart() != mark) {
            return state;
        }
        long left = count - (estimate - actual);
        return left <= 0 ? null : new State(mark, left);
    }
}
