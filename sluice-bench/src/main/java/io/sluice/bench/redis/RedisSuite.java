package io.sluice.bench.redis;

import io.sluice.bench.BenchContext;
import io.sluice.bench.Measurement;
import io.sluice.bench.Profile;
import io.sluice.bench.Suite;
import io.sluice.redis.RedisStore;
import io.sluice.testkit.redis.RespConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The Redis suite: every contender under the same limit, one hot key and many keys, 1 to 64 requests in
 * flight, sync and async, on a redis-server of its own; then redis-benchmark replaying Sluice's own EVALSHA
 * as the ceiling ({@link RedisBenchmarkCeiling}). Each row: a warm-up, then measured runs back to back; the
 * row reports the medians of the runs, Redis CPU and commands per decision over all runs, and over-admissions
 * over the whole load.
 */
public final class RedisSuite implements Suite {

    /** The key every request of a hot-key row asks for. */
    static final String HOT_KEY = "hot-key";

    /** A contender to build, named before it exists so a failure to build can be reported against it. */
    public record Entry(String system, String algorithm, Supplier<RedisContender> factory) {}

    @Override
    public String name() {
        return "redis";
    }

    @Override
    public List<Measurement> run(BenchContext context) throws Exception {
        if (!LocalRedis.onPath("redis-server")) {
            return List.of(Measurement.of(name(), "all").note("skipped: redis-server is not on the PATH").build());
        }
        Profile profile = context.profile();
        LocalRedis redis = context.redis();
        String uri = redis.uri();
        List<Measurement> rows = new ArrayList<>();
        try (RespConnection admin = redis.admin()) {
            context.programVersion("redis", RedisStats.version(admin));
            // The store's default timeout, as users get it: under overload its errors are part of the result.
            List<Entry> entries = entries(uri, profile.redisSluiceAlgorithms(), profile.redisSluiceModes(),
                    profile.redisPeers(), RedisLimits.LOAD, RedisStore.Builder.DEFAULT_TIMEOUT).stream()
                    .filter(e -> context.selected(e.system(), e.algorithm())).toList();
            List<RedisContender> contenders = new ArrayList<>();
            try {
                for (Entry entry : entries) {
                    RedisContender contender = open(context, admin, entry, rows);
                    if (contender != null) {
                        contenders.add(contender);
                    }
                }
                // Load by load, every contender in turn: rows that are compared are measured close together,
                // so a change in the machine's background load hits both sides of a ratio alike.
                for (int keyCount : List.of(1, profile.manyKeys())) {
                    List<String> keys = keys(keyCount);
                    for (boolean async : List.of(false, true)) {
                        for (int inFlight : profile.inFlights()) {
                            context.progress().say("redis: %,d %s, %s, %d in flight", keyCount,
                                    keyCount == 1 ? "key" : "keys", async ? "async" : "sync", inFlight);
                            for (RedisContender contender : contenders) {
                                Measurement row;
                                try {
                                    row = measureRow(name(), context, admin, contender, keys, async, inFlight);
                                } catch (RuntimeException e) {
                                    row = Measurement.of("redis", contender.system()).variant(contender.variant())
                                            .mode(async ? "async" : "sync").algorithm(contender.algorithm())
                                            .keys(keyCount).inFlight(inFlight)
                                            .note("failed: " + message(e)).build();
                                }
                                rows.add(row);
                                context.progress().say("  %-14s %-14s %,9.0f decisions/s, p99 %7.0f us, %5.1f us"
                                                + " Redis CPU, %4.1f cmds, %d over-admitted%s",
                                        row.system(), row.algorithm(), orNaN(row.decisionsPerS()), orNaN(row.p99Us()),
                                        orNaN(row.redisCpuUsPerDecision()), orNaN(row.redisCmdsPerDecision()),
                                        row.overAdmitted() == null ? 0 : row.overAdmitted(),
                                        row.note() == null ? "" : " (" + row.note() + ")");
                            }
                        }
                    }
                }
            } finally {
                contenders.forEach(RedisContender::close);
            }
            rows.addAll(new RedisBenchmarkCeiling().run(context, redis, admin));
        }
        return rows;
    }

    /** Builds and tries the contender; null (and a row saying why) when it cannot decide. */
    static RedisContender open(BenchContext context, RespConnection admin, Entry entry, List<Measurement> rows) {
        RedisContender contender;
        try {
            contender = entry.factory().get();
        } catch (RuntimeException e) {
            context.progress().say("redis: %s/%s could not start: %s", entry.system(), entry.algorithm(), message(e));
            rows.add(failure(entry, "could not start: " + message(e)));
            return null;
        }
        try {
            admin.call("FLUSHALL");
            contender.prepare(List.of("probe"));
            contender.tryAcquire("probe");
            return contender;
        } catch (Exception e) {
            // e.g. an algorithm whose Redis script has not landed yet
            context.progress().say("redis: %s/%s cannot decide: %s", entry.system(), entry.algorithm(), message(e));
            rows.add(failure(entry, "cannot decide: " + message(e)));
            contender.close();
            return null;
        }
    }

    /** As {@link #entries(String, List, List, List, RedisLimits, Duration)} with Sluice in exact mode only. */
    public static List<Entry> entries(String uri, List<String> algorithms, List<String> peers, RedisLimits limits,
                                      Duration sluiceTimeout) {
        return entries(uri, algorithms, List.of(), peers, limits, sluiceTimeout);
    }

    /**
     * The contenders: Sluice with each of {@code algorithms} in exact mode (its store with {@code sluiceTimeout}),
     * Sluice in each of {@code modes} ({@code algorithm/mode}), then each of {@code peers}.
     */
    public static List<Entry> entries(String uri, List<String> algorithms, List<String> modes, List<String> peers,
                                      RedisLimits limits, Duration sluiceTimeout) {
        List<Entry> entries = new ArrayList<>();
        for (String algorithm : algorithms) {
            entries.add(new Entry("sluice", algorithm,
                    () -> new SluiceContender(uri, algorithm, limits, sluiceTimeout)));
        }
        for (String pair : modes) {
            int slash = pair.indexOf('/');
            if (slash < 0) {
                throw new IllegalArgumentException("a Sluice mode row must be algorithm/mode, was " + pair);
            }
            String algorithm = pair.substring(0, slash);
            if (pair.substring(slash + 1).equals(SluiceContender.THREE_LIMITS)) {
                entries.add(new Entry("sluice", algorithm,
                        () -> SluiceContender.threeLimits(uri, algorithm, limits, sluiceTimeout)));
                continue;
            }
            io.sluice.Mode mode = SluiceContender.mode(pair.substring(slash + 1));
            entries.add(new Entry("sluice", algorithm,
                    () -> new SluiceContender(uri, algorithm, mode, limits, sluiceTimeout)));
        }
        for (String peer : peers) {
            entries.add(switch (peer) {
                case "bucket4j" -> new Entry(peer, "token_bucket", () -> new Bucket4jContender(uri, false, limits));
                case "bucket4j-batch" -> new Entry(peer, "token_bucket", () -> new Bucket4jContender(uri, true, limits));
                case "redisson" -> new Entry(peer, "sliding_log", () -> new RedissonContender(uri, limits));
                case "bare-lua" -> new Entry(peer, "token_bucket", () -> new BareLuaContender(uri, limits));
                default -> throw new IllegalArgumentException("unknown Redis peer " + peer);
            });
        }
        return entries;
    }

    public static List<String> keys(int count) {
        if (count == 1) {
            return List.of(HOT_KEY);
        }
        List<String> keys = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            keys.add("user:" + i);
        }
        return Collections.unmodifiableList(keys);
    }

    /** One row of {@code suite}: a warm-up, then the profile's measured runs (see the class comment). */
    static Measurement measureRow(String suite, BenchContext context, RespConnection admin, RedisContender contender,
                                  List<String> keys, boolean async, int inFlight) throws Exception {
        Profile profile = context.profile();
        admin.call("FLUSHALL");
        contender.prepare(keys);
        Measurement.Builder row = Measurement.of(suite, contender.system())
                .variant(contender.variant())
                .mode(async ? "async" : "sync")
                .algorithm(contender.algorithm())
                .config(contender.config())
                .keys(keys.size())
                .threads(async ? 1 : inFlight)
                .inFlight(inFlight);
        List<Double> rates = new ArrayList<>();
        List<Double> p50s = new ArrayList<>();
        List<Double> p99s = new ArrayList<>();
        LoadDriver driver = new LoadDriver(contender, keys, async, inFlight);
        try (driver) {
            driver.start();
            Thread.sleep(profile.redisWarmupMillis());
            long firstDecisions = driver.decisions();
            long firstAdmitted = driver.admitted();
            RedisStats firstStats = RedisStats.take(admin);
            for (int run = 0; run < profile.redisRuns(); run++) {
                long decisions0 = driver.decisions();
                long t0 = System.nanoTime();
                driver.openRun();
                Thread.sleep(profile.redisRunMillis());
                long[] latencies = driver.closeRun();
                long t1 = System.nanoTime();
                rates.add((driver.decisions() - decisions0) / ((t1 - t0) / 1e9));
                p50s.add(driver.latencies().quantileMicros(0.50, latencies));
                p99s.add(driver.latencies().quantileMicros(0.99, latencies));
            }
            RedisStats lastStats = RedisStats.take(admin);
            long measured = driver.decisions() - firstDecisions;
            long measuredAdmitted = driver.admitted() - firstAdmitted;
            driver.stop();
            if (driver.errors() > 0 && driver.decisions() == 0) {
                return row.note("failed: " + message(driver.firstError())).build();
            }
            if (measured > 0) {
                Map<String, Double> commands = lastStats.commandsPerDecision(firstStats, measured);
                row.decisionsPerS(median(rates))
                        .latencyUs(median(p50s), median(p99s))
                        .admittedFraction((double) measuredAdmitted / measured)
                        .redisCpuUsPerDecision(lastStats.cpuMicrosPerDecision(firstStats, measured))
                        .redisCommands(commands.values().stream().mapToDouble(Double::doubleValue).sum(), commands)
                        .overAdmitted(driver.overAdmitted())
                        .runs(profile.redisRuns());
            }
            long failedInRedis = lastStats.failedCalls() - firstStats.failedCalls();
            if (measured == 0 && driver.errors() == 0) {
                // A cold client on a loaded machine can spend a short profile's whole run on its first calls.
                row.note("no decision completed during the measured runs (" + driver.decisions()
                        + " in all, warm-up included)");
            } else if (driver.errors() > 0) {
                row.note(driver.errors() + " errors, first: " + message(driver.firstError()));
            } else if (failedInRedis > 0) {
                row.note(failedInRedis + " commands failed in Redis");
            }
        }
        return row.build();
    }

    private static Measurement failure(Entry entry, String note) {
        return Measurement.of("redis", entry.system()).algorithm(entry.algorithm())
                .variant("sluice".equals(entry.system()) ? "plain" : null).note(note).build();
    }

    /** The median of the values that are numbers (NaN when none is). */
    public static double median(List<Double> values) {
        List<Double> sorted = values.stream().filter(v -> !Double.isNaN(v)).sorted().toList();
        if (sorted.isEmpty()) {
            return Double.NaN;
        }
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }

    public static String message(Throwable e) {
        Throwable cause = e;
        while (cause.getCause() != null && cause.getCause() != cause) {
            cause = cause.getCause();
        }
        String text = cause.getClass().getSimpleName() + ": " + cause.getMessage();
        return text.length() > 200 ? text.substring(0, 200) + "..." : text;
    }

    private static double orNaN(Double value) {
        return value == null ? Double.NaN : value;
    }
}
