package io.sluice.redis.fleet;

import io.sluice.FixedWindow;
import io.sluice.Limit;
import io.sluice.Mode;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.SluiceListener;
import io.sluice.Store;
import io.sluice.internal.algorithm.Arith;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;

/**
 * The runs of a {@link FleetWorker} in a local-first mode: {@code RUN <store> <case> <key> <start> <mode>}. The
 * case is a {@link FleetCase} or a {@link LeasedFleetCase}; the mode is {@code leased} ({@link Mode#leased()}).
 * Each (store, mode) gets a store of its own, opened on first use with a listener that counts the permits its
 * leases were granted, so the worker's exact-mode stores are untouched.
 *
 * <p>The reply is the worker's {@code DONE} line followed by {@code granted=<permits leased during the run>}
 * and {@code windows=<W>:<index>=<admitted>,...} {@code straddling=<n>}: when the rule has an epoch-aligned
 * {@code fixed_window}, the admissions of this process per window of the shortest one ({@code W} µs, index
 * {@code t / W} on the wall clock, which is the clock Redis's {@code TIME} reads on this machine). An admission
 * is counted in a window only when the clock read before the call and after the decision fall in the same
 * window, so it certainly happened there; the others are counted as straddling.
 */
final class FleetModeRuns implements AutoCloseable {

    private final Map<String, String> specs;
    private final String prefix;
    private final Map<String, Store> stores = new HashMap<>();
    private final Map<String, AtomicLong> granted = new HashMap<>();
    private final Map<String, RateLimiter> limiters = new HashMap<>();

    /** @param specs the worker's stores by name, as given on its command line */
    FleetModeRuns(Map<String, String> specs, String prefix) {
        this.specs = specs;
        this.prefix = prefix;
    }

    /** Runs {@code RUN <store> <case> <key> <start> <mode>} and returns the DONE line. */
    String run(String[] w, ExecutorService pool, int threads, long minNanos, long maxNanos) throws Exception {
        String store = w[1];
        String caseName = w[2];
        String key = w[3];
        String mode = w[5];
        RateLimiter limiter = limiter(store, caseName, mode);
        AtomicLong leased = granted.get(store + " " + mode);
        long grantedBefore = leased.get();
        Admissions admissions = new Admissions(shortestEpochWindow(limiter.rule()), alternating(caseName));
        FleetWorker.Result r = FleetWorker.hammer(limiter, key, Long.parseLong(w[4]), pool, threads, minNanos,
                Math.min(maxNanos, runNanos(caseName)), minAttempts(caseName), admissions);
        return "DONE " + store + " " + caseName + " " + key + " " + r.admitted() + " " + r.attempts() + " "
                + r.errors() + " granted=" + (leased.get() - grantedBefore) + " " + admissions;
    }

    private RateLimiter limiter(String store, String caseName, String mode) {
        String storeKey = store + " " + mode;
        Store s = stores.get(storeKey);
        if (s == null) {
            String spec = specs.get(store);
            if (spec == null) {
                throw new IllegalArgumentException("unknown store " + store + "; the worker has " + specs.keySet());
            }
            AtomicLong leased = new AtomicLong();
            s = FleetWorker.open(spec, prefix, new SluiceListener() {
                @Override
                public void onLease(Rule rule, long requested, long grantedPermits) {
                    leased.addAndGet(grantedPermits);
                }
            });
            stores.put(storeKey, s);
            granted.put(storeKey, leased);
        }
        Store on = s;
        return limiters.computeIfAbsent(store + " " + caseName + " " + mode,
                k -> RateLimiter.builder(rule(caseName).withMode(mode(mode))).store(on).build());
    }

    private static Mode mode(String name) {
        if (name.equals("leased")) {
            return Mode.leased();
        }
        throw new IllegalArgumentException("unknown mode '" + name + "'; expected leased");
    }

    private static Rule rule(String caseName) {
        for (FleetCase c : FleetCase.values()) {
            if (c.name().equals(caseName)) {
                return c.rule();
            }
        }
        return LeasedFleetCase.valueOf(caseName).rule();
    }

    private static long minAttempts(String caseName) {
        for (FleetCase c : FleetCase.values()) {
            if (c.name().equals(caseName)) {
                return c.bound();
            }
        }
        return LeasedFleetCase.valueOf(caseName).minAttempts();
    }

    /** The longest a run of the case may last: a {@link LeasedFleetCase}'s own span, else no shorter ceiling. */
    private static long runNanos(String caseName) {
        for (FleetCase c : FleetCase.values()) {
            if (c.name().equals(caseName)) {
                return Long.MAX_VALUE;
            }
        }
        long millis = LeasedFleetCase.valueOf(caseName).runMillis();
        return millis == 0 ? Long.MAX_VALUE : TimeUnit.MILLISECONDS.toNanos(millis);
    }

    private static boolean alternating(String caseName) {
        for (FleetCase c : FleetCase.values()) {
            if (c.name().equals(caseName)) {
                return false;
            }
        }
        return LeasedFleetCase.valueOf(caseName).alternating();
    }

    /** The shortest epoch-aligned fixed window of the rule, in µs, or 0 when it has none. */
    static long shortestEpochWindow(Rule rule) {
        long shortest = 0;
        for (Limit l : rule.limits()) {
            if (l instanceof FixedWindow f && f.align() == FixedWindow.Align.EPOCH) {
                long w = Arith.micros(f.window());
                shortest = shortest == 0 ? w : Math.min(shortest, w);
            }
        }
        return shortest;
    }

    @Override
    public void close() {
        stores.values().forEach(Store::close);
    }

    /**
     * Admissions of one run per epoch window (see the class comment), and the pace of an alternating load: in
     * even windows the process makes one attempt per {@value #LIGHT_GAP_MICROS} µs, in odd ones as many as its
     * threads can. Thread-safe.
     */
    static final class Admissions {
        static final long LIGHT_GAP_MICROS = 2_000;

        private final long window;
        private final boolean alternating;
        private final AtomicLong nextLightAttempt = new AtomicLong();
        private final ConcurrentHashMap<Long, LongAdder> byWindow = new ConcurrentHashMap<>();
        private final LongAdder straddling = new LongAdder();

        Admissions(long windowMicros, boolean alternating) {
            this.window = windowMicros;
            this.alternating = alternating && windowMicros > 0;
        }

        /** Returns when the calling thread may attempt, by the pace of the load. */
        void pace() {
            while (alternating) {
                long now = wallMicros();
                if ((now / window) % 2 == 1) {
                    return;
                }
                long next = nextLightAttempt.get();
                if (now >= next && nextLightAttempt.compareAndSet(next, now + LIGHT_GAP_MICROS)) {
                    return;
                }
                LockSupport.parkNanos(200_000);
            }
        }

        /** The wall clock before an attempt (0 when not recording). */
        long before() {
            return window == 0 ? 0 : wallMicros();
        }

        /** An attempt that started at {@code before} was admitted. */
        void admitted(long before) {
            if (window == 0) {
                return;
            }
            long after = wallMicros();
            if (before / window == after / window) {
                byWindow.computeIfAbsent(before / window, k -> new LongAdder()).increment();
            } else {
                straddling.increment();
            }
        }

        private static long wallMicros() {
            Instant now = Instant.now();
            return now.getEpochSecond() * 1_000_000 + now.getNano() / 1_000;
        }

        @Override
        public String toString() {
            return "windows=" + window + ":" + new TreeMap<>(byWindow).entrySet().stream()
                    .map(e -> e.getKey() + "=" + e.getValue().sum()).collect(Collectors.joining(","))
                    + " straddling=" + straddling.sum();
        }
    }
}
