package io.sluice;

/**
 * Receives what limiters and stores do, for metrics, logs and tests ({@code sluice-micrometer} turns these into
 * Micrometer meters). Every method has an empty default; implement the ones you need.
 *
 * <p>Methods are called on the thread that made the decision or on the store's I/O threads: they must be
 * fast, must not block, and must not throw (an exception is logged and dropped by callers that can, never
 * turned into a decision). With no listener configured ({@link #NONE}) nothing is measured and nothing is
 * called.
 */
public interface SluiceListener {

    /** The listener that does nothing, the default everywhere: callers skip timing entirely for it. */
    SluiceListener NONE = new SluiceListener() {
        @Override
        public String toString() {
            return "SluiceListener.NONE";
        }
    };

    /** States of a store's circuit breaker. */
    enum BreakerState {
        /** Calls go to the store. */
        CLOSED,
        /** Calls fail fast to the failure policy until the cool-down ends. */
        OPEN,
        /** The cool-down ended: one probe call goes to the store; its outcome closes or reopens the breaker. */
        HALF_OPEN
    }

    /**
     * A limiter decided a request for {@code key} under {@code rule} ({@link Decision#source()} says who decided):
     * what an application audits ("who was limited") and what the server's hottest-keys report counts. Limiters
     * call this method, once per decision (peeks included), with the key exactly as they were given it. The
     * default passes the decision on to {@link #onDecision(Rule, Decision)}, so a listener written before
     * decisions carried their key keeps hearing of every one.
     *
     * <p>Keys come from callers and are as many as they send: a listener that keeps something per key must bound
     * what it keeps (Sluice's own meters never tag by key).
     */
    default void onDecision(Rule rule, String key, Decision decision) {
        onDecision(rule, decision);
    }

    /**
     * A limiter decided a request under {@code rule}, the key left out. Called only through the default of
     * {@link #onDecision(Rule, String, Decision)}: implement that one to see keys, this one when they do not
     * matter.
     */
    default void onDecision(Rule rule, Decision decision) {
    }

    /**
     * A store finished one call to its backend ({@code operation} e.g. {@code decide}, {@code lease},
     * {@code sync}, {@code release}) in {@code nanos}; {@code error} is null on success.
     */
    default void onStoreCall(String operation, long nanos, Throwable error) {
    }

    /** A store's circuit breaker changed state; {@code reason} says why, e.g. the failure that opened it. */
    default void onBreakerTransition(BreakerState from, BreakerState to, String reason) {
    }

    /** A leased-mode node asked the store for {@code requested} permits of {@code rule} and got {@code granted}. */
    default void onLease(Rule rule, long requested, long granted) {
    }

    /**
     * A synced-mode node finished one sync round: {@code keys} keys, {@code pushed} permits pushed, in
     * {@code nanos}; {@code error} is null on success.
     */
    default void onSync(int keys, long pushed, long nanos, Throwable error) {
    }
}
