package io.sluice.internal.algorithm;

import io.sluice.CalendarWindow;
import io.sluice.Limit;

/**
 * {@code calendar_window}: one counter per calendar window of a time zone's wall clock.
 *
 * <h2>Model</h2>
 *
 * A {@code fixed_window} whose windows are not multiples of a length but the calendar units of a zone: the
 * window containing {@code t} is {@code [start, end)} as {@link CalendarPeriods} derives it (the first instant
 * the wall clock shows the start of a minute, hour, day, week, month or year, to the next such instant). A
 * request for {@code p} permits is admitted when {@code count + p <= limit} and adds {@code p}; the counter is
 * forgotten when its window ends.
 *
 * <pre>
 *   limit 3 per day, Europe/Berlin; Sunday 2026-03-29 has 23 hours (02:00 becomes 03:00)
 *   t = 2026-03-29T10:00+02:00  +2  admitted  window [03-28T23:00Z, 03-29T22:00Z)  count 2
 *   t = 2026-03-29T23:30+02:00  +2  rejected, retry after 30 min (midnight Berlin)  count 2
 *   t = 2026-03-30T00:00+02:00  +2  admitted  window [03-29T22:00Z, 03-30T22:00Z)  count 2
 * </pre>
 *
 * <h2>State and invariants</h2>
 *
 * {@code (windowEnd, count)}: the end of the window the counter belongs to and the permits charged in it,
 * {@code 0 < count <= MAX_COUNT} (a pure inspection stores nothing; a lowered limit may leave
 * {@code count > limit}). The state stores the end, not the start, because every decision needs only the end:
 * the count applies while {@code now < windowEnd}, and the reset and retry-after are {@code windowEnd − now}.
 * So the calendar is consulted only when a request opens a window, once per key and window; and the Redis port
 * needs the zone's boundaries only then (below). A {@code now} before the window's start (a client clock that
 * stepped back) still counts against the stored window, the conservative reading. {@link #expiresAt} is
 * {@code windowEnd}: from then on the state decides exactly like no state.
 *
 * <h2>Decision</h2>
 *
 * <ul>
 *   <li>{@code remaining = max(0, limit − count)} after this decision's charge.
 *   <li>{@code retryAfter = windowEnd − now} when rejected: the counter never goes down inside a window, and
 *       the next window admits any request of at most {@code limit} permits, so this is exact: it is the real
 *       next boundary, 23 or 25 hours away on a daylight-saving day, 28 to 31 days for a month.
 *   <li>{@code resetAfter = windowEnd − now} while the counter is non-zero, else 0.
 *   <li>A request for more than {@code limit} permits can never pass: rejected with {@link Arith#NEVER}
 *       (stores refuse it before it gets here, as above {@link Limit#maxPermits()}).
 * </ul>
 *
 * <h2>The Redis port and server time</h2>
 *
 * Lua in Redis has no time zone data, and the store must decide on the server's clock, not the client's. So
 * each call carries, after the limit's parameter words, the boundaries {@link CalendarPeriods#around} computed
 * from the client's clock: the start of the previous window, the current window and the end of the next one.
 * When a request opens a window, the script takes the window of the table that contains the server's time
 * ({@code b[i] <= now < b[i+1]}) and refuses with an error naming both when the server's time is outside the
 * table: the client's and the server's clocks may then differ by up to one window (a minute for minute windows)
 * and the decision is the one this class takes at the server's time. A live state needs no table at all.
 *
 * <h2>Arithmetic</h2>
 *
 * Boundaries are whole seconds in microseconds, at most {@link CalendarPeriods#END} = {@code 2^53 + 2}; counts
 * at most {@code 2·10^12}; every difference {@code windowEnd − now} is exact in a double.
 */
final class CalendarWindowAlgorithm implements Algorithm<CalendarWindowAlgorithm.State>, Settleable<CalendarWindowAlgorithm.State> {

    /**
     * @param windowEnd end of the window the counter belongs to (µs since the epoch)
     * @param count     permits charged in that window, in [1, {@link Limit#MAX_COUNT}]
     */
    record State(long windowEnd, long count) {}

    private final CalendarWindow limit;

    CalendarWindowAlgorithm(CalendarWindow limit) {
        this.limit = limit;
    }

    @Override
    public Limit limit() {
        return limit;
    }

    @Override
    public Step<State> step(State state, long now, long permits, long maxWaitMicros) {
        long count = countAt(state, now);
        if (permits == 0) {
            return Step.allow(0, remaining(count), count > 0 ? state.windowEnd() - now : 0, state, state);
        }
        if (count + permits <= limit.limit()) {
            long end = count > 0 ? state.windowEnd() : CalendarPeriods.end(limit, now);
            long after = count + permits;
            return Step.allow(0, remaining(after), end - now, new State(end, after), state);
        }
        if (count == 0) {
            // More than the limit in one request: no window ever admits it.
            return Step.reject(remaining(0), Arith.NEVER, 0, state);
        }
        long untilEnd = state.windowEnd() - now;
        return Step.reject(remaining(count), untilEnd, untilEnd, state);
    }

    @Override
    public long grantable(State state, long now, long permits) {
        return Math.max(0, Math.min(permits, limit.limit() - countAt(state, now)));
    }

    @Override
    public long expiresAt(State state) {
        return state.windowEnd();
    }

    /** Keeps the count when only the limit changed; another period, zone or first day of the week restarts. */
    @Override
    public State migrate(State state, Limit previous, long now) {
        if (!(previous instanceof CalendarWindow before)) {
            throw new IllegalArgumentException("previous must be a CalendarWindow, was " + previous);
        }
        boolean sameWindows = before.period() == limit.period() && before.zone().equals(limit.zone())
                && (limit.period() != CalendarWindow.Period.WEEK || before.weekStartsOn() == limit.weekStartsOn());
        return sameWindows ? state : null;
    }

    /** The count of the window containing now: the state's count while its window lasts, else 0. */
    private static long countAt(State state, long now) {
        return state != null && now < state.windowEnd() ? state.count() : 0;
    }

    private long remaining(long charged) {
        return Math.max(0, limit.limit() - charged);
    }

    /*
     * Settling a ticket (Settleable), as fixed_window: the mark is the end of the calendar window charged; a
     * refund lowers that window's count while it is still the current one (count 0: no state), never a later
     * window's; an extra charge goes to the window current at now, past the limit if need be.
     */
    @Override
    public long mark(State admitted, long now) {
        return admitted.windowEnd();
    }

    @Override
    public State settle(State state, long now, long mark, long estimate, long actual) {
        long count = countAt(state, now);
        if (actual > estimate) {
            long end = count > 0 ? state.windowEnd() : CalendarPeriods.end(limit, now);
            return new State(end, Math.min(Limit.MAX_COUNT, count + (actual - estimate)));
        }
        if (actual == estimate || count == 0 || state.windowEnd() != mark) {
            return state;
        }
        long left = count - (estimate - actual);
        return left <= 0 ? null : new State(mark, left);
    }
}
