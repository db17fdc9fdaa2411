package io.sluice.internal.algorithm;

import io.sluice.Decision;

/**
 * {@link GcraAlgorithm#step} on a {@link StateCell} whose {@code s0} is the TAT and {@code s1} the refund clock
 * ({@code refunded}, 0 for a key never refunded into): the same lines, with the admitted state written into the
 * cell instead of allocated. GcraInPlacePropertiesTest holds the
 * two to the same decisions and states.
 */
final class GcraInPlace implements InPlaceStep<GcraAlgorithm.State> {

    private final GcraAlgorithm gcra;

    GcraInPlace(GcraAlgorithm gcra) {
        this.gcra = gcra;
    }

    @Override
    public void load(GcraAlgorithm.State state, StateCell cell) {
        cell.s0 = state.tat();
        cell.s1 = state.refunded();
        cell.expiresAt = gcra.expiresAt(state);
    }

    @Override
    public GcraAlgorithm.State save(StateCell cell) {
        return new GcraAlgorithm.State(cell.s0, cell.s1);
    }

    @Override
    public long grantable(StateCell cell, boolean live, long now, long permits) {
        long tat = live ? Math.max(cell.s0, now) : now;
        return Math.min(permits, gcra.available(tat, now));
    }

    @Override
    public Decision step(StateCell cell, boolean live, long now, long permits, long maxWaitMicros, boolean peek) {
        long tat = live ? Math.max(cell.s0, now) : now;
        if (permits == 0) {
            return InPlaceStep.admitted(gcra.limit(), peek, 0, 0, gcra.available(tat, now),
                    GcraAlgorithm.duration(tat - now));
        }
        if (permits > gcra.limit().burst()) {
            return InPlaceStep.rejected(gcra.limit(), gcra.available(tat, now), Arith.NEVER,
                    GcraAlgorithm.duration(tat - now));
        }
        long newTat = tat + permits * gcra.interval;
        long allowAt = newTat - gcra.burstOffset;
        if (allowAt <= now) {
            commit(cell, live, newTat, now, peek);
            return InPlaceStep.admitted(gcra.limit(), peek, permits, 0, (now - allowAt) / gcra.interval,
                    GcraAlgorithm.duration(newTat - now));
        }
        long wait = allowAt <= Arith.MAX_TIME ? GcraAlgorithm.duration(allowAt - now) : Arith.NEVER;
        if (maxWaitMicros > 0 && wait != Arith.NEVER && wait <= maxWaitMicros) {
            commit(cell, live, newTat, now, peek);
            return InPlaceStep.admitted(gcra.limit(), peek, permits, wait, 0, GcraAlgorithm.duration(newTat - now));
        }
        // A rejection commits the state it was given: nothing to write.
        return InPlaceStep.rejected(gcra.limit(), gcra.available(tat, now), wait, GcraAlgorithm.duration(tat - now));
    }

    /**
     * The admitted state, the new TAT with the refund clock of the state it came from (none when not live),
     * unless the request only peeks.
     */
    private static void commit(StateCell cell, boolean live, long newTat, long now, boolean peek) {
        if (!peek) {
            if (!live) {
                cell.s1 = 0;
            }
            cell.s0 = newTat;
            cell.wrote(GcraAlgorithm.expiresAt(newTat, cell.s1), now);
        }
    }
}
