package io.sluice.bench.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * Keeps a fixed number of requests in flight against one {@link RedisContender}: {@code sync} with that many
 * threads each blocked on its call, {@code async} with one thread that issues a new call whenever one of the
 * outstanding calls completes. Keys are taken in turn from the key list. Counts decisions and admissions per
 * key for the whole load, and latencies while a measured run is open.
 */
public final class LoadDriver implements AutoCloseable {

    private final RedisContender contender;
    private final List<String> keys;
    private final boolean async;
    private final int inFlight;
    private final AtomicLong nextKey = new AtomicLong();
    private final AtomicLongArray admittedPerKey;
    private final LongAdder decisions = new LongAdder();
    private final LongAdder admitted = new LongAdder();
    private final LongAdder errors = new LongAdder();
    private final AtomicReference<Throwable> firstError = new AtomicReference<>();
    private final LatencySample latencies;
    private final List<Thread> threads = new ArrayList<>();
    private final Semaphore slots;
    private volatile boolean running = true;
    private volatile boolean measuring;
    private long startNanos;
    private long endNanos;

    public LoadDriver(RedisContender contender, List<String> keys, boolean async, int inFlight) {
        this.contender = contender;
        this.keys = keys;
        this.async = async;
        this.inFlight = inFlight;
        this.admittedPerKey = new AtomicLongArray(keys.size());
        this.latencies = new LatencySample(1 << 20);
        this.slots = new Semaphore(inFlight);
    }

    /** Starts the load. */
    public void start() {
        startNanos = System.nanoTime();
        if (async) {
            threads.add(started(new Thread(this::driveAsync, "bench-async-driver")));
        } else {
            for (int i = 0; i < inFlight; i++) {
                threads.add(started(new Thread(this::driveSync, "bench-sync-" + i)));
            }
        }
    }

    private static Thread started(Thread thread) {
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    private int takeKey() {
        return (int) (nextKey.getAndIncrement() % keys.size());
    }

    private void driveSync() {
        while (running) {
            int key = takeKey();
            long t0 = System.nanoTime();
            try {
                boolean ok = contender.tryAcquire(keys.get(key));
                completed(key, ok, System.nanoTime() - t0);
            } catch (Exception e) {
                failed(e);
            }
        }
    }

    private void driveAsync() {
        try {
            while (running) {
                slots.acquire();
                if (!running) {
                    slots.release();
                    break;
                }
                int key = takeKey();
                long t0 = System.nanoTime();
                CompletableFuture<Boolean> decision;
                try {
                    decision = contender.tryAcquireAsync(keys.get(key));
                } catch (RuntimeException e) {
                    failed(e);
                    slots.release();
                    continue;
                }
                decision.whenComplete((ok, error) -> {
                    if (error != null) {
                        failed(error);
                    } else {
                        completed(key, ok, System.nanoTime() - t0);
                    }
                    slots.release();
                });
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void completed(int key, boolean ok, long latencyNanos) {
        decisions.increment();
        if (ok) {
            admitted.increment();
            admittedPerKey.incrementAndGet(key);
        }
        if (measuring) {
            latencies.record(latencyNanos);
        }
    }

    private void failed(Throwable error) {
        errors.increment();
        firstError.compareAndSet(null, error);
        if (errors.sum() > 1000) {
            running = false;   // a contender that only fails would spin; the row reports the first error
        }
    }

    /** Opens a measured run: latencies are recorded from now on. */
    public void openRun() {
        latencies.clear();
        measuring = true;
    }

    /** Closes the measured run and returns its latencies, sorted. */
    public long[] closeRun() {
        measuring = false;
        return latencies.sorted();
    }

    public LatencySample latencies() {
        return latencies;
    }

    public long decisions() {
        return decisions.sum();
    }

    public long admitted() {
        return admitted.sum();
    }

    public long errors() {
        return errors.sum();
    }

    public Throwable firstError() {
        return firstError.get();
    }

    /** Stops issuing requests and waits for the outstanding ones, 10 s at most in all. */
    public void stop() throws InterruptedException {
        running = false;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        for (Thread t : threads) {
            long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            if (left > 0) {
                t.join(left);
            }
        }
        if (async) {
            slots.tryAcquire(inFlight, Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        }
        endNanos = System.nanoTime();
    }

    /** Admissions beyond the contender's limit, summed over keys, over the whole load (warm-up included). */
    public long overAdmitted() {
        long bound = contender.admissionBound((endNanos - startNanos) / 1_000);
        long over = 0;
        for (int i = 0; i < admittedPerKey.length(); i++) {
            over += Math.max(0, admittedPerKey.get(i) - bound);
        }
        return over;
    }

    @Override
    public void close() {
        if (running) {
            try {
                stop();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
