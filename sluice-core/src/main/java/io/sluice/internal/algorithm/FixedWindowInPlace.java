package io.sluice.internal.algorithm;

import io.sluice.Decision;
import io.sluice.FixedWindow;

/**
 * {@link FixedWindowAlgorithm#step} on a {@link StateCell} holding (windowStart, count) in (s0, s1): the same
 * lines, with the recorded state written into the cell instead of allocated. A request of 0 permits and a
 * rejection without {@code countRejected} commit the state they were given, so they write nothing.
 * FixedWindowInPlacePropertiesTest holds the two to the same decisions and states.
 */
final class FixedWindowInPlace implements InPlaceStep<FixedWindowAlgorithm.State> {

    private final FixedWindowAlgorithm fw;
    private final FixedWindow limit;

    FixedWindowInPlace(FixedWindowAlgorithm fw, FixedWindow limit) {
        this.fw = fw;
        this.limit = limit;
    }

    @Override
    public void load(FixedWindowAlgorithm.State state, StateCell cell) {
        cell.s0 = state.windowStart();
        cell.s1 = state.count();
        cell.expiresAt = fw.expiresAt(state);
    }

    @Override
    public FixedWindowAlgorithm.State save(StateCell cell) {
        return new FixedWindowAlgorithm.State(cell.s0, cell.s1);
    }

    @Override
    public long grantable(StateCell cell, boolean live, long now, long permits) {
        long t = live ? Math.max(now, cell.s0) : now;
        return Math.max(0, Math.min(permits, limit.limit() - countAt(cell, live, t)));
    }

    @Override
    public Decision step(StateCell cell, boolean live, long now, long permits, long maxWaitMicros, boolean peek) {
        long t = live ? Math.max(now, cell.s0) : now;      // FixedWindowAlgorithm.clock
        long count = countAt(cell, live, t);
        long start = count > 0 ? cell.s0 : fw.openingAt(t);
        long untilEnd = start + fw.window - t;
        if (permits == 0 || count + permits <= limit.limit()) {
            long after = count + permits;
            if (permits > 0) {
                record(cell, start, after, now, peek);
            }
            return InPlaceStep.admitted(limit, peek, permits, 0, remaining(after), after > 0 ? untilEnd : 0);
        }
        long charged = count;
        if (limit.countRejected()) {
            charged = Math.min(FixedWindowAlgorithm.COUNT_CEILING, count + permits);
            record(cell, start, charged, now, peek);
        }
        return InPlaceStep.rejected(limit, remaining(charged), untilEnd, untilEnd);
    }

    /** FixedWindowAlgorithm.countAt: the count of the window containing t. */
    private long countAt(StateCell cell, boolean live, long t) {
        return live && t < cell.s0 + fw.window ? cell.s1 : 0;
    }

    /** The recorded state, State(start, min(ceiling, count)), unless the request only peeks. */
    private void record(StateCell cell, long start, long count, long now, boolean peek) {
        if (!peek) {
            cell.s0 = start;
            cell.s1 = Math.min(FixedWindowAlgorithm.COUNT_CEILING, count);
            cell.wrote(start + fw.window, now);     // FixedWindowAlgorithm.expiresAt
        }
    }

    private long remaining(long charged) {
        return Math.max(0, limit.limit() - charged);
    }
}
