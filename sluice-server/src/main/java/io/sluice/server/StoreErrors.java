package io.sluice.server;

import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Counts and logs failed store calls. A store that is down fails every request; the log says so at most once
 * per {@link #LOG_INTERVAL_NANOS} with how many failed since, and the metric counts each.
 */
final class StoreErrors {

    private static final Logger LOG = LoggerFactory.getLogger(StoreErrors.class);
    private static final long LOG_INTERVAL_NANOS = 10_000_000_000L;

    private final ServerMetrics metrics;
    private final AtomicLong lastLogged = new AtomicLong(System.nanoTime() - LOG_INTERVAL_NANOS);
    private final AtomicLong sinceLogged = new AtomicLong();

    StoreErrors(ServerMetrics metrics) {
        this.metrics = metrics;
    }

    void record(String api, Throwable error) {
        metrics.storeError(api);
        long failed = sinceLogged.incrementAndGet();
        long last = lastLogged.get();
        long now = System.nanoTime();
        if (now - last >= LOG_INTERVAL_NANOS && lastLogged.compareAndSet(last, now)) {
            sinceLogged.addAndGet(-failed);
            LOG.atWarn().setMessage("store call failed")
                    .addKeyValue("event", "store_error")
                    .addKeyValue("api", api)
                    .addKeyValue("failures_since_last_report", failed)
                    .addKeyValue("error", String.valueOf(error))
                    .log();
        }
    }
}
