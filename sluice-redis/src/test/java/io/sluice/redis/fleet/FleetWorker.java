package io.sluice.redis.fleet;

import io.sluice.redis.RedisStore;
import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.SluiceListener;
import io.sluice.Store;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One process of the fleet {@link FleetAccuracyIT} starts: connects its stores (Redis with server time) and
 * hammers one key from many threads with {@code tryAcquire} when told to, printing what it admitted.
 *
 * <pre>
 * java -cp TEST_CLASSPATH io.sluice.redis.fleet.FleetWorker PREFIX THREADS MIN_MILLIS MAX_MILLIS NAME=STORE...
 *   PREFIX     the Redis stores' key prefix (fresh per fleet)
 *   THREADS    threads per run, all on the one key
 *   MIN_MILLIS each thread keeps trying for at least this long ...
 *   MAX_MILLIS ... and until this process made BOUND attempts, but never longer than this
 *   NAME=STORE a store to run on, by name: redis://host:port (standalone); cluster:redis://seed,redis://seed
 *              (a Redis Cluster); memory (a store of this process alone: the control experiment, processes
 *              that share no state over-admit)
 * </pre>
 *
 * <p>Protocol on standard input and output, one line each: the worker prints {@code READY} once connected and
 * warmed up; {@code RUN <store> <case> <key> <start>} (a {@link FleetCase} name, the start in epoch
 * milliseconds) hammers {@code key} under that case's rule on that store from that instant and prints
 * {@code DONE <store> <case> <key> <admitted> <attempts> <errors>}; {@code RUN <store> <case> <key> <start> <mode>}
 * does the same in a local-first mode on stores of its own and adds what the mode measured (see
 * {@link FleetModeRuns}); {@code QUIT} (or the end of input) exits.
 * Errors (any exception from the limiter) are counted and the first is printed on standard error: a failed call
 * may or may not have been charged, so the fleet asserts there were none.
 */
public final class FleetWorker {

    private FleetWorker() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 5) {
            System.err.println("usage: FleetWorker PREFIX THREADS MIN_MILLIS MAX_MILLIS NAME=STORE...");
            System.exit(2);
        }
        String prefix = args[0];
        int threads = Integer.parseInt(args[1]);
        long minNanos = Duration.ofMillis(Long.parseLong(args[2])).toNanos();
        long maxNanos = Duration.ofMillis(Long.parseLong(args[3])).toNanos();
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        Map<String, Store> stores = new LinkedHashMap<>();
        Map<String, String> specs = new LinkedHashMap<>();
        FleetModeRuns modeRuns = new FleetModeRuns(specs, prefix);
        try {
            for (int i = 4; i < args.length; i++) {
                int eq = args[i].indexOf('=');
                specs.put(args[i].substring(0, eq), args[i].substring(eq + 1));
                stores.put(args[i].substring(0, eq), open(args[i].substring(eq + 1), prefix));
            }
            Map<String, RateLimiter> limiters = new HashMap<>();
            for (Map.Entry<String, Store> store : stores.entrySet()) {
                for (FleetCase c : FleetCase.values()) {
                    limiters.put(store.getKey() + " " + c.name(),
                            RateLimiter.builder(c.rule()).store(store.getValue()).build());
                }
                warmUp(store.getValue(), pool, threads);
            }
            out.println("READY");
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String line;
            while ((line = in.readLine()) != null && !line.equals("QUIT")) {
                String[] w = line.split(" ");
                if (w.length == 6 && w[0].equals("RUN")) {
                    // RUN <store> <case> <key> <start> <mode>: a run in a local-first mode (FleetModeRuns).
                    out.println(modeRuns.run(w, pool, threads, minNanos, maxNanos));
                    continue;
                }
                RateLimiter limiter = w.length == 5 && w[0].equals("RUN") ? limiters.get(w[1] + " " + w[2]) : null;
                if (limiter == null) {
                    System.err.println("FleetWorker: unknown command '" + line + "'");
                    System.exit(2);
                }
                long startAt = Long.parseLong(w[4]);
                Result r = hammer(limiter, w[3], startAt, pool, threads, minNanos, maxNanos,
                        FleetCase.valueOf(w[2]).bound(), null);
                out.println("DONE " + w[1] + " " + w[2] + " " + w[3] + " " + r.admitted + " " + r.attempts + " "
                        + r.errors);
            }
        } finally {
            pool.shutdownNow();
            for (Store s : stores.values()) {
                s.close();
            }
            modeRuns.close();
        }
    }

    private static Store open(String spec, String prefix) {
        return open(spec, prefix, SluiceListener.NONE);
    }

    /** A store by its spec (see the usage), telling {@code listener} what it does when it is a Redis store. */
    static Store open(String spec, String prefix, SluiceListener listener) {
        if (spec.equals("memory")) {
            return Store.memory().build();
        }
        boolean cluster = spec.startsWith("cluster:");
        // A generous timeout: a call that times out may or may not have been charged, which would make the
        // count inexact; on a loaded test machine a second can pass.
        return RedisStore.builder().uri(cluster ? spec.substring("cluster:".length()) : spec).cluster(cluster)
                .prefix(prefix).timeout(Duration.ofSeconds(10)).listener(listener).build();
    }

    /** What one run counted. */
    record Result(long admitted, long attempts, long errors) {}

    /**
     * All threads start together on the key at {@code startAtMillis} (wall clock: every process of the fleet
     * is on this machine, so they start together); each tries until {@code minNanos} have passed and this
     * process made {@code minAttempts} attempts, or {@code maxNanos} passed.
     */
    static Result hammer(RateLimiter limiter, String key, long startAtMillis, ExecutorService pool,
                         int threads, long minNanos, long maxNanos, long minAttempts,
                         FleetModeRuns.Admissions admissions) throws Exception {
        CountDownLatch start = new CountDownLatch(1);
        AtomicLong attempts = new AtomicLong();
        AtomicLong admitted = new AtomicLong();
        AtomicLong errors = new AtomicLong();
        AtomicReference<Throwable> firstError = new AtomicReference<>();
        List<Future<?>> running = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            running.add(pool.submit(() -> {
                start.await();
                long begin = System.nanoTime();
                for (;;) {
                    long elapsed = System.nanoTime() - begin;
                    if (elapsed >= maxNanos || (elapsed >= minNanos && attempts.get() >= minAttempts)) {
                        return null;
                    }
                    if (admissions != null) {
                        admissions.pace();
                    }
                    attempts.incrementAndGet();
                    try {
                        long before = admissions == null ? 0 : admissions.before();
                        Decision d = limiter.tryAcquire(key);
                        if (d.allowed()) {
                            admitted.incrementAndGet();
                            if (admissions != null) {
                                admissions.admitted(before);
                            }
                        }
                    } catch (RuntimeException e) {
                        errors.incrementAndGet();
                        firstError.compareAndSet(null, e);
                    }
                }
            }));
        }
        long wait = startAtMillis - System.currentTimeMillis();
        if (wait > 0) {
            Thread.sleep(wait);
        }
        start.countDown();
        for (Future<?> f : running) {
            f.get();
        }
        if (firstError.get() != null) {
            System.err.println("FleetWorker: " + errors.get() + " calls failed on " + key + "; the first:");
            firstError.get().printStackTrace();
        }
        return new Result(admitted.get(), attempts.get(), errors.get());
    }

    /**
     * Loads the script, opens the connection and gets the JIT going before the first counted run, with
     * peeks (which charge nothing) of a ported algorithm on a key of its own.
     */
    private static void warmUp(Store store, ExecutorService pool, int threads) throws Exception {
        try (RateLimiter warm = RateLimiter.builder(Rule.of("warmup", FixedWindow.of(1, Duration.ofSeconds(1))))
                .store(store).build()) {
            List<Future<?>> running = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                running.add(pool.submit(() -> {
                    for (int i = 0; i < 100; i++) {
                        warm.peek("warmup", 1);
                    }
                    return null;
                }));
            }
            for (Future<?> f : running) {
                f.get();
            }
        }
    }
}
