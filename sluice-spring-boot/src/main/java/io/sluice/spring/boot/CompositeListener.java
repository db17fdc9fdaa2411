package io.sluice.spring.boot;

import io.sluice.Decision;
import io.sluice.Rule;
import io.sluice.SluiceListener;
import java.util.List;

/** Tells every listener bean (Sluice's meters and the application's own) of each event, in bean order. */
final class CompositeListener implements SluiceListener {

    private final List<SluiceListener> listeners;

    private CompositeListener(List<SluiceListener> listeners) {
        this.listeners = listeners;
    }

    /** {@link SluiceListener#NONE} for none (so limiters skip timing), the one itself, or a composite. */
    static SluiceListener of(List<SluiceListener> listeners) {
        return listeners.isEmpty() ? SluiceListener.NONE
                : listeners.size() == 1 ? listeners.get(0) : new CompositeListener(List.copyOf(listeners));
    }

    @Override
    public void onDecision(Rule rule, String key, Decision decision) {
        listeners.forEach(l -> l.onDecision(rule, key, decision));
    }

    @Override
    public void onDecision(Rule rule, Decision decision) {
        listeners.forEach(l -> l.onDecision(rule, decision));
    }

    @Override
    public void onStoreCall(String operation, long nanos, Throwable error) {
        listeners.forEach(l -> l.onStoreCall(operation, nanos, error));
    }

    @Override
    public void onBreakerTransition(BreakerState from, BreakerState to, String reason) {
        listeners.forEach(l -> l.onBreakerTransition(from, to, reason));
    }

    @Override
    public void onLease(Rule rule, long requested, long granted) {
        listeners.forEach(l -> l.onLease(rule, requested, granted));
    }

    @Override
    public void onSync(int keys, long pushed, long nanos, Throwable error) {
        listeners.forEach(l -> l.onSync(keys, pushed, nanos, error));
    }
}
