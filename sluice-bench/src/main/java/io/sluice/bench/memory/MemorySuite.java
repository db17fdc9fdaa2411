package io.sluice.bench.memory;

import io.sluice.Decision;
import io.sluice.Limit;
import io.sluice.RateLimiter;
import io.sluice.RollingWindow;
import io.sluice.Rule;
import io.sluice.SlidingLog;
import io.sluice.bench.BenchContext;
import io.sluice.bench.Measurement;
import io.sluice.bench.Profile;
import io.sluice.bench.Suite;
import io.sluice.bench.redis.LocalRedis;
import io.sluice.bench.redis.RedisContender;
import io.sluice.bench.redis.RedisLimits;
import io.sluice.bench.redis.RedisSuite;
import io.sluice.redis.RedisStore;
import io.sluice.testkit.redis.RespConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The memory suite: what one key costs in Redis. For every Sluice algorithm and every peer, 10,000 keys get one
 * request each; the row reports the MEMORY USAGE of everything those requests left behind, per key, and the
 * growth of used_memory per key (which also counts Redis's own dictionary growth). Then the case where the
 * algorithm matters most: a sliding log of one hour at 10 requests per second, against the rolling window
 * that approximates it with one-minute buckets, driven through a whole virtual hour.
 */
public final class MemorySuite implements Suite {

    /**
     * Sluice's store timeout here: memory is measured, not latency, so a loaded machine must not turn slow
     * answers into missing rows.
     */
    private static final Duration SLUICE_TIMEOUT = Duration.ofSeconds(10);

    /**
     * Keys that expire within this many milliseconds are not state: Sluice keeps each request id for twice its
     * timeout to make replays harmless. The limits of this suite keep state for hours.
     */
    private static final long TRANSIENT_MILLIS = 2 * SLUICE_TIMEOUT.toMillis() + 1_000;
    private static final int MAX_IN_FLIGHT = 256;

    @Override
    public String name() {
        return "memory";
    }

    @Override
    public List<Measurement> run(BenchContext context) throws Exception {
        if (!LocalRedis.onPath("redis-server")) {
            return List.of(Measurement.of(name(), "all").note("skipped: redis-server is not on the PATH").build());
        }
        Profile profile = context.profile();
        LocalRedis redis = context.redis();
        List<Measurement> rows = new ArrayList<>();
        try (RespConnection admin = redis.admin()) {
            List<String> peers = profile.redisPeers().stream()
                    .filter(p -> !p.equals("bucket4j-batch"))   // the same state as bucket4j
                    .toList();
            for (RedisSuite.Entry entry : RedisSuite.entries(redis.uri(), Arrays.asList(RedisLimits.ALL_ALGORITHMS),
                    peers, RedisLimits.MEMORY, SLUICE_TIMEOUT)) {
                if (context.selected(entry.system(), entry.algorithm())) {
                    Measurement row = perKey(admin, entry, profile.memoryKeys());
                    rows.add(row);
                    context.progress().say("  memory %-10s %-18s %8.1f bytes/key (used_memory %8.1f)%s",
                            row.system(), row.algorithm(), orNaN(row.bytesPerKey()), orNaN(row.usedMemoryBytesPerKey()),
                            row.note() == null ? "" : " (" + row.note() + ")");
                }
            }
            for (Limit limit : List.of(SlidingLog.of(36_000, Duration.ofHours(1)),
                    RollingWindow.of(36_000, Duration.ofHours(1), Duration.ofMinutes(1)))) {
                if (profile.logKeys() > 0 && context.selected("sluice", limit.algorithm())) {
                    Measurement row = wholeHour(redis, admin, limit, profile.logKeys());
                    rows.add(row);
                    context.progress().say("  memory sluice     %-18s %10.0f bytes/key after 1 h at 10 requests/s%s",
                            row.algorithm(), orNaN(row.bytesPerKey()), row.note() == null ? "" : " (" + row.note() + ")");
                }
            }
        }
        return rows;
    }

    private static Measurement perKey(RespConnection admin, RedisSuite.Entry entry, int keyCount) throws Exception {
        Measurement.Builder row = Measurement.of("memory", entry.system())
                .variant("sluice".equals(entry.system()) ? "plain" : null)
                .mode("one_request_per_key").algorithm(entry.algorithm()).keys(keyCount);
        admin.call("FLUSHALL");
        RedisContender contender;
        try {
            contender = entry.factory().get();
        } catch (RuntimeException e) {
            return row.note("could not start: " + RedisSuite.message(e)).build();
        }
        try (contender) {
            row.config(contender.config());
            List<String> keys = RedisSuite.keys(keyCount);
            long before = usedMemory(admin);
            try {
                contender.prepare(keys);
                oneRequestEach(contender, keys);
            } catch (Exception e) {
                return row.note("cannot decide: " + RedisSuite.message(e)).build();
            }
            long usage = stateMemoryUsage(admin);
            long after = usedMemory(admin);
            return row.bytesPerKey((double) usage / keyCount)
                    .usedMemoryBytesPerKey((double) (after - before) / keyCount)
                    .runs(1)
                    .build();
        }
    }

    private static void oneRequestEach(RedisContender contender, List<String> keys) throws Exception {
        Semaphore slots = new Semaphore(MAX_IN_FLIGHT);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        for (String key : keys) {
            slots.acquire();
            contender.tryAcquireAsync(key).whenComplete((allowed, error) -> {
                if (error != null) {
                    failure.compareAndSet(null, error);
                }
                slots.release();
            });
        }
        slots.acquire(MAX_IN_FLIGHT);
        if (failure.get() != null) {
            throw new IllegalStateException(failure.get());
        }
    }

    /**
     * How long one hour-long row may take before it is given up (and said so in its note, without a figure). The
     * sliding log's hour costs Redis 55 s of CPU for one key on a loaded 2-core machine (docs/redis-memory.md);
     * the whole run's 30 minutes leave it 90 s.
     */
    private static final Duration WHOLE_HOUR_BUDGET = Duration.ofSeconds(90);

    /**
     * Sluice's {@code limit} (36,000 per hour) driven at 10 requests per second for a whole hour on a virtual
     * clock, for {@code keyCount} keys, then the MEMORY USAGE per key.
     */
    private static Measurement wholeHour(LocalRedis redis, RespConnection admin, Limit limit, int keyCount)
            throws Exception {
        Measurement.Builder row = Measurement.of("memory", "sluice").variant("plain").mode("log_1h_10rps")
                .algorithm(limit.algorithm()).keys(keyCount)
                .config(limit instanceof RollingWindow ? "36000 per 1 h, 1 min buckets; 10 requests/s for 1 h"
                        : "36000 per 1 h; 10 requests/s for 1 h");
        admin.call("FLUSHALL");
        long start = System.currentTimeMillis() * 1_000;
        AtomicLong now = new AtomicLong(start);
        long requests = 36_000;
        long stepMicros = 100_000;
        try (RedisStore store = RedisStore.builder().uri(redis.uri()).clock(now::get)
                .timeout(SLUICE_TIMEOUT).build();
             RateLimiter limiter = RateLimiter.builder(Rule.of("bench", limit)).store(store).build()) {
            Semaphore slots = new Semaphore(MAX_IN_FLIGHT);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            AtomicLong rejected = new AtomicLong();
            long deadline = System.nanoTime() + WHOLE_HOUR_BUDGET.toNanos();
            for (long i = 0; i < requests && failure.get() == null; i++) {
                if (System.nanoTime() > deadline) {
                    // The sliding log keeps its log in one value, which each decision reads and counts whole: at
                    // 36,000 entries a few milliseconds of Redis per decision on a loaded machine. No figure for
                    // a part of the hour (the targets compare whole hours), but what was reached, as a lower
                    // bound, in the note.
                    slots.acquire(MAX_IN_FLIGHT);
                    return row.note(String.format(java.util.Locale.ROOT, "stopped after %d of %d steps, %.0f bytes/key"
                            + " then (a lower bound): the hour did not fit in %d s", i, requests,
                            (double) stateMemoryUsage(admin) / keyCount, WHOLE_HOUR_BUDGET.toSeconds())).build();
                }
                // Calls leave this thread in order on one connection, so Redis sees the times in order.
                now.set(start + i * stepMicros);
                for (int k = 0; k < keyCount; k++) {
                    slots.acquire();
                    CompletableFuture<Decision> decision = limiter.tryAcquireAsync("user:" + k, 1);
                    decision.whenComplete((d, error) -> {
                        if (error != null) {
                            failure.compareAndSet(null, error);
                        } else if (!d.allowed()) {
                            rejected.incrementAndGet();
                        }
                        slots.release();
                    });
                }
            }
            slots.acquire(MAX_IN_FLIGHT);
            if (failure.get() != null) {
                return row.note("cannot decide: " + RedisSuite.message(failure.get())).build();
            }
            row.bytesPerKey((double) stateMemoryUsage(admin) / keyCount).runs(1);
            if (rejected.get() > 0) {
                row.note(rejected.get() + " of " + requests * keyCount + " requests rejected");
            }
            return row.build();
        }
    }

    private static long usedMemory(RespConnection admin) {
        String info = (String) admin.call("INFO", "memory");
        for (String line : info.split("\r\n")) {
            if (line.startsWith("used_memory:")) {
                return Long.parseLong(line.substring("used_memory:".length()));
            }
        }
        throw new IllegalStateException("INFO memory has no used_memory");
    }

    /**
     * MEMORY USAGE (all samples) of every key that is state. Transient keys (request ids, which would be gone in
     * a second or two anyway) are deleted instead, so that used_memory afterwards counts state only; waiting for
     * them to expire would cost the same seconds per row.
     */
    private static long stateMemoryUsage(RespConnection admin) {
        List<String> keys = new ArrayList<>();
        String cursor = "0";
        do {
            List<?> reply = (List<?>) admin.call("SCAN", cursor, "COUNT", "1000");
            cursor = (String) reply.get(0);
            for (Object key : (List<?>) reply.get(1)) {
                keys.add((String) key);
            }
        } while (!cursor.equals("0"));
        long total = 0;
        for (String key : keys) {
            long ttl = (Long) admin.call("PTTL", key);
            if (ttl >= 0 && ttl <= TRANSIENT_MILLIS) {
                admin.call("DEL", key);
            } else if (admin.call("MEMORY", "USAGE", key, "SAMPLES", "0") instanceof Long bytes) {
                total += bytes;
            }
        }
        return total;
    }

    private static double orNaN(Double value) {
        return value == null ? Double.NaN : value;
    }
}
