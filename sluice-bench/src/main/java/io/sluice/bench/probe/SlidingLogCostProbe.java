package io.sluice.bench.probe;

import io.sluice.redis.RedisStore;

import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.SlidingLog;
import io.sluice.testkit.redis.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Measures what one sliding_log decision costs Redis as its log grows (not a test: it asserts nothing, and speed
 * belongs to the benchmark module). For each log length it stores a log of that many entries, 100 ms apart,
 * one permit each, under a limit of one hour that admits them all (the benchmark's memory row: 36,000 per hour
 * at 10 requests per second), then times decisions that each append one more entry: the EVALSHA time Redis
 * reports in {@code INFO commandstats} (wall-clock time inside Redis) and the CPU time of Redis's main thread,
 * per decision.
 *
 * <p>Run it from the module after {@code mvn -o -pl sluice-bench -am package -DskipTests}:
 * {@code java -cp sluice-bench/target/sluice-bench.jar io.sluice.bench.probe.SlidingLogCostProbe [decisions per length] [lengths...]}, or
 * with the single argument {@code hour} for the benchmark's whole hour on one key (see {@link #hour()}).
 */
public final class SlidingLogCostProbe {

    private static final long STEP_MICROS = 100_000;

    private SlidingLogCostProbe() {}

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("hour")) {
            hour();
            return;
        }
        int decisions = args.length > 0 ? Integer.parseInt(args[0]) : 30;
        List<Integer> lengths = args.length > 1
                ? java.util.Arrays.stream(args, 1, args.length).map(Integer::valueOf).toList()
                : List.of(1_000, 5_000, 20_000, 36_000);
        SlidingLog limit = SlidingLog.of(36_000 + decisions, Duration.ofHours(1));
        long start = 1_767_225_600_000_000L;
        AtomicLong now = new AtomicLong(start);
        try (RedisServer server = RedisServer.start();
             RedisStore store = RedisStore.builder().uri(server.uri()).clock(now::get)
                     .timeout(Duration.ofSeconds(30)).build();
             RateLimiter limiter = RateLimiter.builder(Rule.of("probe", limit)).store(store).build()) {
            System.out.printf(Locale.ROOT, "%8s %10s %14s %14s %12s%n", "entries", "decisions", "evalsha usec",
                    "cpu usec", "value bytes");
            for (int entries : lengths) {
                server.flushAll();
                now.set(start);
                limiter.tryAcquire("k", 1);
                String key = stateKey(server);
                String stored = (String) server.call("GET", key);
                String fingerprint = stored.substring(0, stored.indexOf('|'));
                StringBuilder value = new StringBuilder(fingerprint).append('|');
                for (int i = 0; i < entries; i++) {
                    if (i > 0) {
                        value.append(',');
                    }
                    value.append(Long.toString(start + i * STEP_MICROS, 36)).append(",1");
                }
                server.call("SET", key, value.toString(), "PX", "36000000");
                server.call("CONFIG", "RESETSTAT");
                double cpuBefore = mainThreadCpuMicros(server);
                for (int k = 0; k < decisions; k++) {
                    now.set(start + (entries + k) * STEP_MICROS);
                    if (!limiter.tryAcquire("k", 1).allowed()) {
                        throw new IllegalStateException("rejected at " + entries + " entries");
                    }
                }
                double cpu = (mainThreadCpuMicros(server) - cpuBefore) / decisions;
                System.out.printf(Locale.ROOT, "%8d %10d %14.1f %14.1f %12s%n", entries, decisions,
                        evalshaMicros(server) / decisions, cpu, server.call("STRLEN", key));
            }
        }
    }

    /**
     * The benchmark's row: one key through a whole hour at 10 requests per second (36,000 decisions, 256 in
     * flight), then the wall time, Redis's main-thread CPU time and MEMORY USAGE of the key.
     */
    private static void hour() throws Exception {
        long start = 1_767_225_600_000_000L;
        AtomicLong now = new AtomicLong(start);
        try (RedisServer server = RedisServer.start();
             RedisStore store = RedisStore.builder().uri(server.uri()).clock(now::get)
                     .timeout(Duration.ofSeconds(30)).build();
             RateLimiter limiter = RateLimiter.builder(Rule.of("probe", SlidingLog.of(36_000, Duration.ofHours(1))))
                     .store(store).build()) {
            java.util.concurrent.Semaphore slots = new java.util.concurrent.Semaphore(256);
            java.util.concurrent.atomic.AtomicInteger rejected = new java.util.concurrent.atomic.AtomicInteger();
            double cpuBefore = mainThreadCpuMicros(server);
            long wallBefore = System.nanoTime();
            for (int i = 0; i < 36_000; i++) {
                now.set(start + i * STEP_MICROS);
                slots.acquire();
                limiter.tryAcquireAsync("k", 1).whenComplete((d, e) -> {
                    if (e != null || !d.allowed()) {
                        rejected.incrementAndGet();
                    }
                    slots.release();
                });
            }
            slots.acquire(256);
            System.out.printf(Locale.ROOT, "hour: %.1f s wall, %.1f s Redis CPU, %d not admitted, MEMORY USAGE %s%n",
                    (System.nanoTime() - wallBefore) / 1e9, (mainThreadCpuMicros(server) - cpuBefore) / 1e6,
                    rejected.get(), server.call("MEMORY", "USAGE", stateKey(server), "SAMPLES", "0"));
        }
    }

    private static String stateKey(RedisServer server) {
        List<?> reply = (List<?>) server.call("KEYS", "*sliding_log*");
        if (reply.size() != 1) {
            throw new IllegalStateException("expected one state key, found " + reply);
        }
        return (String) reply.get(0);
    }

    private static double mainThreadCpuMicros(RedisServer server) {
        double seconds = 0;
        for (String line : String.valueOf(server.call("INFO", "cpu")).split("\r?\n")) {
            if (line.startsWith("used_cpu_user_main_thread:") || line.startsWith("used_cpu_sys_main_thread:")) {
                seconds += Double.parseDouble(line.substring(line.indexOf(':') + 1).trim());
            }
        }
        return seconds * 1e6;
    }

    private static double evalshaMicros(RedisServer server) {
        for (String line : String.valueOf(server.call("INFO", "commandstats")).split("\r?\n")) {
            if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_fcall:")) {
                for (String field : line.substring(line.indexOf(':') + 1).split(",")) {
                    String[] kv = field.split("=");
                    if (kv[0].equals("usec")) {
                        return Long.parseLong(kv[1]);
                    }
                }
            }
        }
        return Double.NaN;
    }
}
