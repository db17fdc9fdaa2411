package io.sluice.bench.probe;

import io.sluice.redis.RedisStore;

import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.Gcra;
import io.sluice.Limit;
import io.sluice.Mode;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.SlidingLog;
import io.sluice.TokenBucket;
import io.sluice.testkit.redis.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Measures Redis CPU per decision (not a test: it asserts nothing, and speed belongs to the benchmark module).
 * For each algorithm, on one key and on 10,000 keys, it keeps 64 async decisions in flight against its own
 * redis-server, resets the server's statistics after a warm-up, runs the measured decisions and reads
 * {@code INFO commandstats}: the EVALSHA time Redis spent (the whole script, its nested commands included) per
 * decision, and the number of EVALSHA calls per decision; and {@code INFO cpu}: the CPU time of Redis's main
 * thread per decision (network reads and writes included, as the benchmark module counts it). Commandstats time
 * is wall-clock time, which a busy machine inflates whenever it preempts Redis mid-command; CPU time is not.
 *
 * <p>Run it from the module after {@code mvn -o -pl sluice-bench -am package -DskipTests}:
 * {@code java -cp sluice-bench/target/sluice-bench.jar io.sluice.bench.probe.RedisCpuProbe [decisions] [exact|coalesced|both] [rounds] [algorithm]}: the minimum and the median over the rounds
 * (the machine's other load inflates Redis's timings, never deflates them).
 */
public final class RedisCpuProbe {

    private static final int IN_FLIGHT = 64;

    private RedisCpuProbe() {}

    public static void main(String[] args) throws Exception {
        int decisions = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
        String modes = args.length > 1 ? args[1] : "exact";
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 5;
        String only = args.length > 3 ? args[3] : "";
        Map<String, Limit> limits = new LinkedHashMap<>();
        // The benchmark's shapes: 1,000 per second with bursts of 100 (the hot key mostly rejects, each of the
        // 10,000 keys mostly admits).
        limits.put("token_bucket", TokenBucket.of(100, 1000, Duration.ofSeconds(1)));
        limits.put("gcra", Gcra.of(1000, Duration.ofSeconds(1)).withBurst(100));
        limits.put("fixed_window", FixedWindow.of(1000, Duration.ofSeconds(1)));
        limits.put("sliding_log", SlidingLog.of(100, Duration.ofSeconds(1)));
        try (RedisServer server = RedisServer.start();
             RedisStore store = RedisStore.builder().uri(server.uri()).build()) {
            System.out.printf(Locale.ROOT, "%-13s %-10s %6s %9s %13s %13s %13s %13s %9s%n", "algorithm", "mode",
                    "keys", "decisions", "evalsha/dec", "evalsha usec", "(median)", "cpu usec", "admitted");
            for (Map.Entry<String, Limit> e : limits.entrySet()) {
                if (!only.isEmpty() && !only.equals(e.getKey())) {
                    continue;
                }
                for (String mode : modes.equals("both") ? List.of("exact", "coalesced") : List.of(modes)) {
                    for (int keys : new int[] {1, 10_000}) {
                        Rule rule = Rule.of("probe_" + e.getKey(), e.getValue());
                        if (mode.equals("coalesced")) {
                            rule = rule.withMode(Mode.coalesced());
                        }
                        double[] perDecision = new double[rounds];
                        double[] cpuPerDecision = new double[rounds];
                        long calls = 0;
                        long admitted = 0;
                        for (int r = 0; r < rounds; r++) {
                            server.flushAll();
                            run(store, rule, keys, Math.min(decisions, 5_000));
                            server.call("CONFIG", "RESETSTAT");
                            double cpuBefore = mainThreadCpuMicros(server);
                            admitted += run(store, rule, keys, decisions);
                            cpuPerDecision[r] = (mainThreadCpuMicros(server) - cpuBefore) / decisions;
                            long[] stat = evalsha(server);
                            calls += stat[0];
                            perDecision[r] = stat[1] / (double) decisions;
                        }
                        Arrays.sort(perDecision);
                        Arrays.sort(cpuPerDecision);
                        System.out.printf(Locale.ROOT, "%-13s %-10s %6d %9d %13.3f %13.2f %13.2f %13.2f %8.1f%%%n",
                                e.getKey(), mode, keys, decisions, calls / (double) rounds / decisions, perDecision[0],
                                perDecision[rounds / 2], cpuPerDecision[rounds / 2],
                                100.0 * admitted / decisions / rounds);
                    }
                }
            }
        }
    }

    /** Runs {@code n} tryAcquire(1) decisions with 64 in flight over {@code keys} keys; returns the admitted. */
    private static long run(RedisStore store, Rule rule, int keys, int n) throws InterruptedException {
        Semaphore slots = new Semaphore(IN_FLIGHT);
        AtomicLong admitted = new AtomicLong();
        List<Throwable> errors = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            slots.acquire();
            CompletableFuture<Decision> f = store.decideAsync(rule, "k" + (i % keys), Request.tryAcquire(1));
            f.whenComplete((d, error) -> {
                if (error != null) {
                    synchronized (errors) {
                        errors.add(error);
                    }
                } else if (d.allowed()) {
                    admitted.incrementAndGet();
                }
                slots.release();
            });
        }
        if (!slots.tryAcquire(IN_FLIGHT, 30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("decisions did not complete");
        }
        if (!errors.isEmpty()) {
            throw new IllegalStateException("decisions failed: " + errors.get(0), errors.get(0));
        }
        return admitted.get();
    }

    /** CPU time of Redis's main thread (user + system) in microseconds: what it spent, preemption excluded. */
    private static double mainThreadCpuMicros(RedisServer server) {
        double seconds = 0;
        for (String line : String.valueOf(server.call("INFO", "cpu")).split("\r?\n")) {
            if (line.startsWith("used_cpu_user_main_thread:") || line.startsWith("used_cpu_sys_main_thread:")) {
                seconds += Double.parseDouble(line.substring(line.indexOf(':') + 1).trim());
            }
        }
        return seconds * 1e6;
    }

    /** EVALSHA calls and microseconds since the last CONFIG RESETSTAT. */
    private static long[] evalsha(RedisServer server) {
        String info = String.valueOf(server.call("INFO", "commandstats"));
        for (String line : info.split("\r?\n")) {
            if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_fcall:")) {
                long calls = 0;
                long usec = 0;
                for (String field : line.substring(line.indexOf(':') + 1).split(",")) {
                    String[] kv = field.split("=");
                    if (kv[0].equals("calls")) {
                        calls = Long.parseLong(kv[1]);
                    } else if (kv[0].equals("usec")) {
                        usec = Long.parseLong(kv[1]);
                    }
                }
                return new long[] {calls, usec};
            }
        }
        return new long[] {0, 0};
    }
}
