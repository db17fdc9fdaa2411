package io.sluice.internal.algorithm;

import io.sluice.Decision;
import io.sluice.SlidingWindow;

/**
 * {@link SlidingWindowAlgorithm#step} on a {@link StateCell} holding (windowStart, previous, current) in
 * (s0, s1, s2): the same lines, with the rolled state ("seen") in locals instead of a new {@code State}, and the
 * admitted state written into the cell. A rejection and a request of 0 permits commit the state they were given,
 * so they write nothing. SlidingWindowInPlacePropertiesTest holds the two to the same decisions and states.
 */
final class SlidingWindowInPlace implements InPlaceStep<SlidingWindowAlgorithm.State> {

    private final SlidingWindowAlgorithm sw;
    private final SlidingWindow limit;

    SlidingWindowInPlace(SlidingWindowAlgorithm sw, SlidingWindow limit) {
        this.sw = sw;
        this.limit = limit;
    }

    @Override
    public void load(SlidingWindowAlgorithm.State state, StateCell cell) {
        cell.s0 = state.windowStart();
        cell.s1 = state.previous();
        cell.s2 = state.current();
        cell.expiresAt = sw.expiresAt(state);
    }

    @Override
    public SlidingWindowAlgorithm.State save(StateCell cell) {
        return new SlidingWindowAlgorithm.State(cell.s0, cell.s1, cell.s2);
    }

    @Override
    public long grantable(StateCell cell, boolean live, long now, long permits) {
        long t = live ? Math.max(now, cell.s0) : now;
        long start = t - t % sw.window;
        long estimate = sw.estimate(previousSeen(cell, live, t, start), currentSeen(cell, live, t, start), t - start);
        return Math.max(0, Math.min(permits, limit.limit() - estimate));
    }

    @Override
    public Decision step(StateCell cell, boolean live, long now, long permits, long maxWaitMicros, boolean peek) {
        long t = live ? Math.max(now, cell.s0) : now;
        // SlidingWindowAlgorithm.rolled: "seen" is (start, previous, current).
        long start = t - t % sw.window;
        long previous = previousSeen(cell, live, t, start);
        long current = currentSeen(cell, live, t, start);
        long elapsed = t - start;
        long estimate = sw.estimate(previous, current, elapsed);
        if (permits == 0) {
            return InPlaceStep.admitted(limit, peek, 0, 0, sw.remaining(estimate),
                    sw.untilGone(start, previous, current, t));
        }
        if (estimate + permits <= limit.limit()) {
            long after = current + permits;
            if (!peek) {
                cell.s0 = start;
                cell.s1 = previous;
                cell.s2 = after;
                cell.wrote(sw.expiresAt(start, previous, after), now);
            }
            return InPlaceStep.admitted(limit, peek, permits, 0, sw.remaining(estimate + permits),
                    sw.untilGone(start, previous, after, t));
        }
        return InPlaceStep.rejected(limit, sw.remaining(estimate), sw.retryAfter(previous, current, elapsed, permits),
                sw.untilGone(start, previous, current, t));
    }

    /** The previous count of the rolled state: none for no state or an expired one, else by the window of t. */
    private long previousSeen(StateCell cell, boolean live, long t, long start) {
        if (!live || t >= cell.expiresAt) {
            return 0;
        }
        return start == cell.s0 ? cell.s1 : cell.s2;
    }

    private long currentSeen(StateCell cell, boolean live, long t, long start) {
        return live && t < cell.expiresAt && start == cell.s0 ? cell.s2 : 0;
    }
}
