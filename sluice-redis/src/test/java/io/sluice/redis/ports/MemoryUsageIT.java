package io.sluice.redis.ports;

import io.sluice.redis.Topology;
import io.sluice.redis.StoredState;
import io.sluice.redis.RedisStore;
import io.sluice.redis.BatchRequest;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Concurrency;
import io.sluice.FixedWindow;
import io.sluice.Gcra;
import io.sluice.LeakyBucket;
import io.sluice.Limit;
import io.sluice.RateLimiter;
import io.sluice.RefreshPeriod;
import io.sluice.Request;
import io.sluice.RollingWindow;
import io.sluice.Rule;
import io.sluice.SlidingLog;
import io.sluice.SlidingWindow;
import io.sluice.SmoothBursty;
import io.sluice.SmoothWarmingUp;
import io.sluice.TokenBucket;
import io.sluice.redis.internal.DefaultRedisStore;
import io.sluice.redis.internal.LimitParams;
import io.sluice.redis.internal.RedisUris;
import io.sluice.redis.internal.SluiceScript;
import io.sluice.redis.internal.StoreSettings;
import io.sluice.testkit.ManualClock;
import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.SharedRedis;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * What a key costs in Redis (standalone): MEMORY USAGE of a steady-state key of every ported algorithm, with a
 * realistic key ({@code sluice:{api:user:42}:per_second}, 31 characters) at realistic values (times about
 * 1.77e15 µs, counts up to 10^6), printed as a table. token_bucket, gcra, fixed_window and refresh_period must
 * stay within {@value #BUDGET} bytes per key as soon as their Lua file exists. Every key the store creates,
 * request keys included, has a TTL. For information, the used_memory growth of 10,000 keys per algorithm.
 */
@ExtendWith(SharedRedis.class)
class MemoryUsageIT {

    /**
     * Bytes per key for the O(1) algorithms below. The target is 100: gcra meets it (its state is one integer,
     * OneIntegerStateIT pins its bytes); Redis's allocator makes the others' strings 120.
     */
    static final long BUDGET = 128;

    static final Set<String> BUDGETED = Set.of("token_bucket", "gcra", "fixed_window", "refresh_period");

    /** A limit at realistic parameters, and the permits of the one large request of the steady-state run. */
    record Config(String label, Limit limit, long bulk) {}

    /** Typical and large parameters for each algorithm (also those without a port yet: checked once ported). */
    static final Map<String, List<Config>> CONFIGS = new LinkedHashMap<>();

    static {
        CONFIGS.put("fixed_window", List.of(
                new Config("100/s", FixedWindow.of(100, Duration.ofSeconds(1)), 20),
                new Config("10^6/min", FixedWindow.of(1_000_000, Duration.ofMinutes(1)), 999_990)));
        CONFIGS.put("sliding_log", List.of(
                new Config("10/s", SlidingLog.of(10, Duration.ofSeconds(1)), 3),
                new Config("100/min", SlidingLog.of(100, Duration.ofMinutes(1)), 20)));
        CONFIGS.put("sliding_window", List.of(
                new Config("100/s", SlidingWindow.of(100, Duration.ofSeconds(1)), 20),
                new Config("10^6/min", SlidingWindow.of(1_000_000, Duration.ofMinutes(1)), 999_990)));
        CONFIGS.put("rolling_window", List.of(
                new Config("100/s by 100ms", RollingWindow.of(100, Duration.ofSeconds(1), Duration.ofMillis(100)), 20),
                new Config("10^6/min by 1s", RollingWindow.of(1_000_000, Duration.ofMinutes(1), Duration.ofSeconds(1)),
                        999_990)));
        CONFIGS.put("token_bucket", List.of(
                new Config("100, 10/s", TokenBucket.of(100, 10, Duration.ofSeconds(1)), 20),
                // 1 token per minute: roundingError up to 6*10^7 - 1 (5 base-36 digits), tokens near 10^6.
                new Config("10^6, 1/min", TokenBucket.of(1_000_000, 1, Duration.ofMinutes(1)), 1)));
        CONFIGS.put("gcra", List.of(
                new Config("100/s", Gcra.of(100, Duration.ofSeconds(1)), 20),
                new Config("10^6/min", Gcra.of(1_000_000, Duration.ofMinutes(1)), 1_000)));
        CONFIGS.put("leaky_bucket", List.of(
                new Config("100/s", LeakyBucket.of(100, Duration.ofSeconds(1)), 1),
                new Config("10^6/min", LeakyBucket.of(1_000_000, Duration.ofMinutes(1)), 1)));
        CONFIGS.put("smooth_bursty", List.of(
                new Config("100/s", SmoothBursty.of(100.0), 20),
                new Config("3.3/s", SmoothBursty.of(10.0 / 3), 2)));
        CONFIGS.put("smooth_warming_up", List.of(
                new Config("10/s, 1s warmup", SmoothWarmingUp.of(10.0, Duration.ofSeconds(1)), 2)));
        CONFIGS.put("refresh_period", List.of(
                new Config("50/s", RefreshPeriod.of(50, Duration.ofSeconds(1)), 20),
                new Config("10^6/s", RefreshPeriod.of(1_000_000, Duration.ofSeconds(1)), 999_990)));
        CONFIGS.put("concurrency", List.of(
                new Config("10, 30s", Concurrency.of(10, Duration.ofSeconds(30)), 3),
                new Config("1000, 5min", Concurrency.of(1_000, Duration.ofMinutes(5)), 3)));
        CONFIGS.put("calendar_window", List.of(
                new Config("10^4/month Berlin", io.sluice.CalendarWindow.of(10_000, io.sluice.CalendarWindow.Period.MONTH,
                        java.time.ZoneId.of("Europe/Berlin")), 20)));
    }

    private final RedisServer redis = RedisServer.shared();

    /** A 6-character prefix, as long as the default "sluice", so the keys measure like production keys. */
    private static String prefix() {
        return "m" + UUID.randomUUID().toString().substring(0, 5);
    }

    @Test
    void everyAlgorithmIsConfigured() {
        assertThat(CONFIGS.keySet()).containsExactlyInAnyOrderElementsOf(SluiceScript.ALGORITHMS);
        CONFIGS.forEach((name, configs) -> assertThat(configs).allSatisfy(c -> assertThat(c.limit().algorithm())
                .isEqualTo(name)));
    }

    @Test
    void aSteadyStateKeyFitsTheBudgetAndEveryKeyHasATtl() {
        List<String> table = new ArrayList<>();
        table.add(String.format("%-18s %-16s %6s %7s  %s", "algorithm", "limit", "bytes", "chars", "value"));
        List<String> failures = new ArrayList<>();
        for (String algorithm : SluiceScript.ALGORITHMS) {
            if (!SluiceScript.get().supports(algorithm)) {
                table.add(String.format("%-18s %-16s %6s", algorithm, "", "(no port yet)"));
                continue;
            }
            for (Config config : CONFIGS.get(algorithm)) {
                String prefix = prefix();
                String key = prefix + ":{api:user:42}:per_second";
                assertThat(key).hasSize(31);
                ManualClock clock = new ManualClock(1_767_225_612_345_678L);
                Rule rule = Rule.of("api", config.limit().named("per_second"));
                try (RedisStore store = Topology.STANDALONE.builder().prefix(prefix).clock(clock).build();
                     RateLimiter l = RateLimiter.builder(rule).store(store).sleeper(clock).build()) {
                    steadyState(l, clock, config);
                    Object bytes = redis.call("MEMORY", "USAGE", key);
                    String type = (String) redis.call("TYPE", key);
                    String value = type.equals("string") ? (String) redis.call("GET", key) : "(" + type + ")";
                    assertThat(bytes).as("%s %s: the key exists at steady state", algorithm, config.label()).isNotNull();
                    long used = (Long) bytes;
                    table.add(String.format("%-18s %-16s %6d %7s  %s", algorithm, config.label(), used,
                            type.equals("string") ? Integer.toString(value.length()) : "", value));
                    if (BUDGETED.contains(algorithm) && used > BUDGET) {
                        failures.add(algorithm + " " + config.label() + ": " + used + " bytes (" + value + ")");
                    }
                    everyKeyHasATtl(prefix);
                } finally {
                    deleteAll(prefix);
                }
            }
        }
        System.out.println("MEMORY USAGE per key at steady state (key " + "sluice:{api:user:42}:per_second"
                + ", Redis " + redisVersion() + "):\n" + String.join("\n", table));
        assertThat(failures).as("over " + BUDGET + " bytes per key").isEmpty();
    }

    /**
     * The states the budgeted algorithms will store once ported, at realistic worst values, written as the
     * libraries encode them (LuaLibrariesIT checks Lua writes base 36 as Java's Long.toString(x, 36)): a check of
     * the encoding itself, independent of the ports.
     */
    @Test
    void theEncodingFitsTheBudgetAtRealisticWorstValues() {
        String fp = LimitParams.fingerprint("token_bucket", "1000000 1 60000000 greedy 1000000");
        Map<String, String> values = new LinkedHashMap<>();
        values.put("fixed_window (windowStart, count 10^6)", StoredState.encode(fp, 1_767_225_600_000_000L, 1_000_000));
        values.put("token_bucket (10^6 - 1 tokens, 1/min)",
                StoredState.encode(fp, 999_999, 1_767_225_612_345_678L, 59_999_999));
        values.put("gcra (tat, one integer)", StoredState.encodeInteger(fp, 1_767_225_612_345_678L));
        values.put("refresh_period (a day of 1 s cycles)",
                StoredState.encode(fp, 1_767_225_600_000_000L, 86_400, 999_999));
        String key = prefix() + ":{api:user:42}:per_second";
        List<String> table = new ArrayList<>();
        try {
            for (Map.Entry<String, String> e : values.entrySet()) {
                redis.call("SET", key, e.getValue(), "PX", "60000");
                long used = (Long) redis.call("MEMORY", "USAGE", key);
                table.add(String.format("%-40s %4d bytes  %2d chars  %s", e.getKey(), used, e.getValue().length(),
                        e.getValue()));
                assertThat(e.getValue()).as(e.getKey()).hasSizeLessThanOrEqualTo(28);
                assertThat(used).as(e.getKey()).isLessThanOrEqualTo(BUDGET);
            }
        } finally {
            redis.call("DEL", key);
        }
        System.out.println("Encoded states at realistic worst values:\n" + String.join("\n", table));
    }

    @Test
    void tenThousandKeysPerAlgorithm() {
        List<String> table = new ArrayList<>();
        for (String algorithm : SluiceScript.ALGORITHMS) {
            if (!SluiceScript.get().supports(algorithm)) {
                continue;
            }
            Config config = CONFIGS.get(algorithm).get(0);
            String prefix = prefix();
            Rule rule = Rule.of("api", config.limit().named("per_second"));
            ManualClock clock = new ManualClock(1_767_225_612_345_678L);
            // Without request ids: the state keys alone (request keys live 2 x timeout + 1 s).
            StoreSettings settings = new StoreSettings(RedisUris.parse(List.of(redis.uri()), false,
                    Duration.ofSeconds(10)), false, prefix, Duration.ofSeconds(10), clock, false);
            try (DefaultRedisStore store = DefaultRedisStore.connect(settings)) {
                long before = usedMemory();
                for (int from = 0; from < 10_000; from += 500) {
                    List<BatchRequest> batch = new ArrayList<>();
                    for (int i = from; i < from + 500; i++) {
                        batch.add(BatchRequest.of(rule, "user:" + i, Request.tryAcquire(1)));
                    }
                    store.decideAll(batch);
                }
                long after = usedMemory();
                table.add(String.format("%-18s %-16s %8.1f bytes per key (used_memory +%d)", algorithm, config.label(),
                        (after - before) / 10_000.0, after - before));
            } finally {
                deleteAll(prefix);
            }
        }
        System.out.println("used_memory growth for 10,000 keys (state keys only, key sluice:{api:user:NNNN}:"
                + "per_second):\n" + String.join("\n", table));
    }

    /** A few decisions, as a key in use sees them: small requests around one large one. */
    private static void steadyState(RateLimiter l, ManualClock clock, Config config) {
        l.tryAcquire("user:42");
        clock.advanceMillis(100);
        l.tryAcquire("user:42", Math.min(config.bulk(), l.rule().maxPermits()));
        clock.advanceMillis(100);
        l.tryAcquire("user:42");
        clock.advanceMillis(37);
        l.tryAcquireAtMost("user:42", 2);
        l.peek("user:42", 0);
    }

    private void everyKeyHasATtl(String prefix) {
        List<String> keys = scan(prefix + ":*");
        assertThat(keys).as("keys of " + prefix).isNotEmpty().anyMatch(k -> k.contains(":r:"));
        for (String key : keys) {
            assertThat((Long) redis.call("PTTL", key)).as("PTTL " + key).isPositive();
        }
    }

    private List<String> scan(String pattern) {
        List<String> keys = new ArrayList<>();
        String cursor = "0";
        do {
            List<?> reply = (List<?>) redis.call("SCAN", cursor, "MATCH", pattern, "COUNT", "1000");
            cursor = (String) reply.get(0);
            for (Object k : (List<?>) reply.get(1)) {
                keys.add((String) k);
            }
        } while (!cursor.equals("0"));
        return keys;
    }

    private void deleteAll(String prefix) {
        List<String> keys = scan(prefix + ":*");
        for (int i = 0; i < keys.size(); i += 500) {
            List<String> command = new ArrayList<>(List.of("UNLINK"));
            command.addAll(keys.subList(i, Math.min(keys.size(), i + 500)));
            redis.call(command.toArray(new String[0]));
        }
    }

    private long usedMemory() {
        Matcher m = Pattern.compile("used_memory:(\\d+)").matcher((String) redis.call("INFO", "memory"));
        assertThat(m.find()).isTrue();
        return Long.parseLong(m.group(1));
    }

    private String redisVersion() {
        Matcher m = Pattern.compile("redis_version:(\\S+)").matcher((String) redis.call("INFO", "server"));
        return m.find() ? m.group(1) : "?";
    }
}
