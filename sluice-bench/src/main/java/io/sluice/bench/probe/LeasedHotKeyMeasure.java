package io.sluice.bench.probe;

import io.sluice.redis.RedisStore;

import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.Limit;
import io.sluice.Mode;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.TokenBucket;
import io.sluice.testkit.redis.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * A measurement, not a test (docs/leased-mode.md quotes it): decisions per second on one hot key from 64 threads
 * of one process, exact against leased mode, and the EVALSHA commands Redis ran per decision. Starts its own
 * redis-server on a free loopback port.
 *
 * <pre>
 * java -cp sluice-bench/target/sluice-bench.jar io.sluice.bench.probe.LeasedHotKeyMeasure [THREADS] [SECONDS]
 * </pre>
 */
public final class LeasedHotKeyMeasure {

    private LeasedHotKeyMeasure() {}

    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 64;
        long seconds = args.length > 1 ? Long.parseLong(args[1]) : 5;
        List<Limit> limits = List.of(
                FixedWindow.of(Limit.MAX_COUNT, Duration.ofDays(366)).named("unreached_fixed_window"),
                FixedWindow.of(50_000, Duration.ofSeconds(1)).named("fixed_window_50k_per_s"),
                TokenBucket.of(5_000, 50_000, Duration.ofSeconds(1)).named("token_bucket_50k_per_s"));
        try (RedisServer redis = RedisServer.start();
             RedisStore store = RedisStore.builder().uri(redis.uri()).prefix("measure").build()) {
            for (Limit limit : limits) {
                for (Mode mode : List.of(Mode.exact(), Mode.leased())) {
                    Rule rule = Rule.of(limit.name() + "_" + mode.name(), limit).withMode(mode);
                    run(redis, store, rule, threads, 1, "warm-up");
                    run(redis, store, rule, threads, seconds, limit.name() + " " + mode.name());
                }
            }
        }
    }

    private static void run(RedisServer redis, RedisStore store, Rule rule, int threads, long seconds, String what)
            throws Exception {
        String key = "hot-" + System.nanoTime();
        System.err.println("running " + what + " on " + rule);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        LongAdder decisions = new LongAdder();
        LongAdder admitted = new LongAdder();
        AtomicBoolean stop = new AtomicBoolean();
        CountDownLatch start = new CountDownLatch(1);
        try (RateLimiter limiter = RateLimiter.builder(rule).store(store).build()) {
            List<Future<?>> running = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                running.add(pool.submit(() -> {
                    start.await();
                    while (!stop.get()) {
                        Decision d = limiter.tryAcquire(key);
                        decisions.increment();
                        if (d.allowed()) {
                            admitted.increment();
                        }
                    }
                    return null;
                }));
            }
            long evalshaBefore = evalsha(redis);
            long began = System.nanoTime();
            start.countDown();
            Thread.sleep(seconds * 1000);
            stop.set(true);
            for (Future<?> f : running) {
                f.get();
            }
            double elapsed = (System.nanoTime() - began) / 1e9;
            long calls = evalsha(redis) - evalshaBefore;
            if (!what.equals("warm-up")) {
                System.out.printf("%-32s %10.0f decisions/s, %9.0f admitted/s, %8d EVALSHA, %.2e EVALSHA per decision"
                                + "%n", what, decisions.sum() / elapsed, admitted.sum() / elapsed, calls,
                        (double) calls / decisions.sum());
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private static long evalsha(RedisServer redis) {
        for (String line : String.valueOf(redis.call("INFO", "commandstats")).split("\r?\n")) {
            if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_fcall:")) {
                for (String field : line.substring(line.indexOf(':') + 1).split(",")) {
                    if (field.startsWith("calls=")) {
                        return Long.parseLong(field.substring(6));
                    }
                }
            }
        }
        return 0;
    }
}
