package io.sluice.bench.local;

import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Admitted and rejected decisions of one thread, reported by JMH as secondary results. They show that a row
 * measured the workload its mode names (a limiter "always granting" that in fact rejected measures something
 * else). Every system pays the same two increments.
 */
@State(Scope.Thread)
@AuxCounters(AuxCounters.Type.EVENTS)
public class Outcomes {

    public long admitted;
    public long rejected;

    @Setup(Level.Iteration)
    public void reset() {
        admitted = 0;
        rejected = 0;
    }

    /** Counts one decision and passes it on, so JMH consumes it (not public: JMH would take it for a counter). */
    boolean count(boolean allowed) {
        if (allowed) {
            admitted++;
        } else {
            rejected++;
        }
        return allowed;
    }
}
