package io.sluice.bench.server;

import io.sluice.bench.BenchContext;
import io.sluice.bench.Measurement;
import io.sluice.bench.Profile;
import io.sluice.bench.Suite;
import io.sluice.bench.redis.LoadDriver;
import io.sluice.bench.redis.LocalRedis;
import io.sluice.bench.redis.RedisLimits;
import io.sluice.bench.redis.RedisStats;
import io.sluice.bench.redis.RedisSuite;
import io.sluice.testkit.redis.RespConnection;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * The server suite: {@code sluice serve} answering {@code POST /v1/check} under load from wrk, on the in-memory
 * store and on the run's redis-server, for one hot key and for many keys. The limit is the Redis suite's
 * ({@link RedisLimits#LOAD}: token_bucket, 1,000 per second, bursts of 100), so a hot key is mostly rejected
 * (429) and each of many keys admitted, and the rows sit beside the library's rows of the same run.
 *
 * <p>Per server: a warm-up at full load until its rate settles (the server is a fresh JVM), then per row a
 * warm-up of its own and {@link Profile#redisRuns()} measured runs, each on fresh keys so that every run can be checked against
 * the limit on its own: admissions beyond burst + rate × the run's length are over-admissions. On Redis, a
 * row also reports Redis CPU and commands per decision (INFO deltas over its measured runs). The load is one
 * wrk thread with as many connections as the Redis suite's largest number in flight.
 *
 * <p>After the memory rows, the ceiling: an empty endpoint of the same HTTP stack ({@link #CEILING}) under the
 * same load. Then {@link EvictionFlood}: a bystander's latency while another client floods the in-memory store with new
 * keys past its bound.
 */
public final class ServerSuite implements Suite {
    private static final String ALGORITHM = "token_bucket";

    @Override
    public String name() {
        return "server";
    }

    /** A row's shape: the store, the rule (the mode is the rule's), and how many keys the load cycles through. */
    private record Shape(String store, String rule, String variant, int keys) {}

    @Override
    public List<Measurement> run(BenchContext context) throws Exception {
        Path dir = Files.createDirectories(context.logDir().resolve("server"));
        Wrk wrk = Wrk.find(dir);
        if (wrk == null) {
            return List.of(Measurement.of(name(), "sluice").algorithm(ALGORITHM)
                    .note("skipped: wrk is not on the PATH (Debian package wrk)").build());
        }
        context.programVersion("wrk", wrk.version());
        Path rules = writeRules(dir.resolve("rules.yaml"));
        Profile profile = context.profile();
        int many = profile.manyKeys();
        List<Measurement> rows = new ArrayList<>();
        if (context.selected("sluice", ALGORITHM + "/memory")) {
            rows.addAll(server(context, wrk, dir, rules, "memory", null, List.of(
                    new Shape("memory", "bench", "memory", 1),
                    new Shape("memory", "bench", "memory", many))));
            rows.add(ceiling(context, wrk, dir, many));
        }
        if (context.selected("sluice", ALGORITHM + "/eviction_flood")) {
            rows.addAll(EvictionFlood.run(context, wrk, dir, rules));
        }
        if (context.selected("sluice", ALGORITHM + "/redis")) {
            if (!LocalRedis.onPath("redis-server")) {
                rows.add(Measurement.of(name(), "sluice").variant("redis").algorithm(ALGORITHM)
                        .note("skipped: redis-server is not on the PATH").build());
            } else {
                LocalRedis redis = context.redis();
                try (RespConnection admin = redis.admin()) {
                    context.programVersion("redis", RedisStats.version(admin));
                    rows.addAll(server(context, wrk, dir, rules, redis.uri(), admin, List.of(
                            new Shape("redis", "bench", "redis", 1),
                            new Shape("redis", "bench", "redis", many),
                            new Shape("redis", "bench_leased", "redis/leased", 1))));
                }
            }
        }
        return rows;
    }

    /** The variant of the ceiling row: an empty endpoint of the same HTTP stack. */
    static final String CEILING = "empty-endpoint";

    /**
     * The ceiling of the memory rows: {@code io.sluice.server.EmptyEndpoint} (Armeria with {@code sluice serve}'s
     * server settings, a constant 200 without reading the request or touching a store) under the same wrk load,
     * warm-up and runs as the server, measured right after it in the same run.
     */
    private Measurement ceiling(BenchContext context, Wrk wrk, Path dir, int keys) throws Exception {
        int connections = Collections.max(context.profile().inFlights());
        Shape shape = new Shape("memory", "bench", CEILING, keys);
        ServeProcess endpoint;
        try {
            endpoint = ServeProcess.startEmptyEndpoint(dir);
        } catch (IllegalStateException e) {
            return row(shape, connections).note("could not start: " + e.getMessage()).build();
        }
        try (endpoint) {
            context.progress().say("  empty endpoint at %s", endpoint.baseUrl());
            warmUp(context, wrk, endpoint, connections);
            Measurement row = measure(context, wrk, endpoint, null, shape, connections);
            context.progress().say("  server %-14s %6d keys %3d connections %,12.0f decisions/s p50 %8.0f us"
                            + " p99 %8.0f us%s", CEILING, keys, connections, orNaN(row.decisionsPerS()),
                    orNaN(row.p50Us()), orNaN(row.p99Us()), row.note() == null ? "" : " (" + row.note() + ")");
            return row;
        }
    }

    /** One server on {@code store}, warmed up, then each shape's row. */
    private List<Measurement> server(BenchContext context, Wrk wrk, Path dir, Path rules, String store,
                                     RespConnection admin, List<Shape> shapes) throws Exception {
        Profile profile = context.profile();
        int connections = Collections.max(profile.inFlights());
        String storeName = shapes.get(0).store();
        List<Measurement> rows = new ArrayList<>();
        if (admin != null) {
            admin.call("FLUSHALL");
        }
        ServeProcess server;
        try {
            server = ServeProcess.start(dir, storeName, rules, store);
        } catch (IllegalStateException e) {
            for (Shape shape : shapes) {
                rows.add(row(shape, connections).note("could not start: " + e.getMessage()).build());
            }
            return rows;
        }
        try (server) {
            context.progress().say("  server on %s at %s", storeName, server.baseUrl());
            warmUp(context, wrk, server, connections);
            for (Shape shape : shapes) {
                Measurement row = measure(context, wrk, server, admin, shape, connections);
                rows.add(row);
                context.progress().say("  server %-14s %6d keys %3d connections %,12.0f decisions/s p50 %8.0f us"
                                + " p99 %8.0f us%s", shape.variant(), shape.keys(), connections,
                        orNaN(row.decisionsPerS()), orNaN(row.p50Us()), orNaN(row.p99Us()),
                        row.note() == null ? "" : " (" + row.note() + ")");
            }
            if (admin == null) {
                Measurement row = measureRemoteClient(context, server, connections);
                rows.add(row);
                context.progress().say("  server %-14s %6d keys %3d in flight  %,12.0f decisions/s p50 %8.0f us"
                                + " p99 %8.0f us%s", "remote-client", profile.manyKeys(), connections,
                        orNaN(row.decisionsPerS()), orNaN(row.p50Us()), orNaN(row.p99Us()),
                        row.note() == null ? "" : " (" + row.note() + ")");
            }
        }
        return rows;
    }

    /**
     * The same server and load through the library: one process (this one) with a {@link RemoteStore} keeping
     * {@code inFlight} asynchronous decisions in flight on one HTTP/2 connection, on many keys, beside wrk's
     * row of the same server (HTTP/1.1, one connection per request in flight). A warm-up as the server's, then
     * the profile's runs; fresh keys for the row.
     */
    private Measurement measureRemoteClient(BenchContext context, ServeProcess server, int inFlight)
            throws Exception {
        Profile profile = context.profile();
        int keys = profile.manyKeys();
        Measurement.Builder row = Measurement.of(name(), "sluice").variant("memory/remote-client").mode("async")
                .algorithm(ALGORITHM).config(RedisLimits.LOAD.describe(ALGORITHM)
                        + "; RemoteStore, batching by default (POST /v1/store/call alone, /v1/store/calls when 4 requests"
                        + " are out) over one HTTP/2 connection")
                .keys(keys).threads(1).inFlight(inFlight);
        List<String> keyList = new ArrayList<>(keys);
        for (int i = 0; i < keys; i++) {
            keyList.add("remote-client:" + i);
        }
        List<Double> rates = new ArrayList<>();
        List<Double> p50s = new ArrayList<>();
        List<Double> p99s = new ArrayList<>();
        try (RemoteClientContender contender = new RemoteClientContender(server.baseUrl());
             LoadDriver driver = new LoadDriver(contender, keyList, true, inFlight)) {
            driver.start();
            // This process's client path is as cold as a new server's was: warm it up the same way, in steps,
            // until its rate settles (at least half the server's warm-up budget, at most all of it), and past the
            // budget while a step completes nothing (a cold client on a machine loaded far past its cores).
            int budget = serverWarmupSeconds(profile);
            int step = Math.min(WARMUP_STEP_SECONDS, budget);
            int spent = 0;
            double previous = 0;
            boolean settled = false;
            while (warmingUp(spent, step, budget, settled, previous)) {
                long d0 = driver.decisions();
                Thread.sleep(step * 1000L);
                double rate = (driver.decisions() - d0) / (double) step;
                spent += step;
                settled = spent >= budget / 2 && rate > 0 && Math.abs(rate - previous) <= 0.05 * previous;
                previous = rate;
            }
            context.progress().say("  remote client warmed up for %d s: %,.0f decisions/s in the last step%s", spent,
                    previous, settled ? "" : " (not settled within the budget)");
            long first = driver.decisions();
            long firstAdmitted = driver.admitted();
            for (int run = 0; run < profile.redisRuns(); run++) {
                long decisions0 = driver.decisions();
                long t0 = System.nanoTime();
                driver.openRun();
                Thread.sleep(runSeconds(profile) * 1000L);
                long[] latencies = driver.closeRun();
                long t1 = System.nanoTime();
                rates.add((driver.decisions() - decisions0) / ((t1 - t0) / 1e9));
                p50s.add(driver.latencies().quantileMicros(0.50, latencies));
                p99s.add(driver.latencies().quantileMicros(0.99, latencies));
            }
            long measured = driver.decisions() - first;
            long admitted = driver.admitted() - firstAdmitted;
            driver.stop();
            if (measured == 0) {
                return row.note(driver.errors() > 0 ? "failed: " + RedisSuite.message(driver.firstError())
                        : "no decision completed").build();
            }
            row.decisionsPerS(RedisSuite.median(rates)).latencyUs(RedisSuite.median(p50s), RedisSuite.median(p99s))
                    .admittedFraction((double) admitted / measured).overAdmitted(driver.overAdmitted())
                    .runs(profile.redisRuns());
            if (driver.errors() > 0) {
                row.note(driver.errors() + " errors, first: " + RedisSuite.message(driver.firstError()));
            }
        }
        return row.build();
    }

    /**
     * Loads a new server until its rate settles: a fresh JVM's HTTP, JSON and decision paths take tens of seconds
     * under this load before the JIT is done with them (measured: 9,000 decisions/s after 8 s, 46,000 after 36 s,
     * then flat), so a fixed short warm-up measures the compiler. Steps of {@link #WARMUP_STEP_SECONDS} on the
     * many-keys shape, for at least half of {@link #serverWarmupSeconds} and at most all of it, until a step is
     * within 5% of the one before; past the budget while a step answers nothing (see {@link #warmingUp}).
     */
    static void warmUp(BenchContext context, Wrk wrk, ServeProcess server, int connections)
            throws IOException, InterruptedException {
        Profile profile = context.profile();
        int budget = serverWarmupSeconds(profile);
        int step = Math.min(WARMUP_STEP_SECONDS, budget);
        int spent = 0;
        double previous = 0;
        boolean settled = false;
        while (warmingUp(spent, step, budget, settled, previous)) {
            double rate = wrk.run(server.baseUrl(), connections, step, "bench", profile.manyKeys(), "warm" + spent)
                    .perSecond();
            spent += step;
            // Half the budget at least: under Redis a step or two can repeat a rate the JIT is about to beat.
            settled = spent >= budget / 2 && Math.abs(rate - previous) <= 0.05 * previous;
            previous = rate;
        }
        context.progress().say("  warmed up for %d s: %,.0f decisions/s in the last step%s", spent, previous,
                settled ? "" : " (not settled within the budget)");
    }

    private Measurement measure(BenchContext context, Wrk wrk, ServeProcess server, RespConnection admin, Shape shape,
                                int connections) throws Exception {
        Profile profile = context.profile();
        Measurement.Builder row = row(shape, connections);
        String url = server.baseUrl();
        String rowName = shape.variant().replace('/', '-') + "-" + shape.keys();
        try {
            wrk.run(url, connections, runSeconds(profile), shape.rule(), shape.keys(), rowName + "-warm");
            List<Double> rates = new ArrayList<>();
            List<Double> p50s = new ArrayList<>();
            List<Double> p99s = new ArrayList<>();
            long requests = 0;
            long admitted = 0;
            long overAdmitted = 0;
            long other = 0;
            long socketErrors = 0;
            RedisStats before = admin == null ? null : RedisStats.take(admin);
            for (int run = 0; run < profile.redisRuns(); run++) {
                Wrk.Result result = wrk.run(url, connections, runSeconds(profile), shape.rule(), shape.keys(),
                        rowName + "-run" + run);
                rates.add(result.perSecond());
                p50s.add(result.p50Us());
                p99s.add(result.p99Us());
                requests += result.requests();
                admitted += result.admitted();
                other += result.other();
                socketErrors += result.socketErrors();
                // Fresh keys each run: every key starts with a full bucket, so the run alone bounds them.
                long keysTouched = Math.min(shape.keys(), result.requests());
                long bound = keysTouched * RedisLimits.LOAD.bucketBound(RedisLimits.LOAD.burst(),
                        (long) Math.ceil(result.seconds() * 1e6));
                overAdmitted += Math.max(0, result.admitted() - bound);
            }
            if (requests == 0) {
                return row.note("no answers: " + socketErrors + " socket errors").build();
            }
            row.decisionsPerS(RedisSuite.median(rates))
                    .latencyUs(RedisSuite.median(p50s), RedisSuite.median(p99s))
                    .runs(profile.redisRuns());
            if (!CEILING.equals(shape.variant())) {
                // The empty endpoint decides nothing: its 200s are no admissions to check against a limit.
                row.admittedFraction((double) admitted / requests).overAdmitted(overAdmitted);
            }
            if (admin != null) {
                RedisStats after = RedisStats.take(admin);
                Map<String, Double> commands = after.commandsPerDecision(before, requests);
                row.redisCpuUsPerDecision(after.cpuMicrosPerDecision(before, requests))
                        .redisCommands(commands.values().stream().mapToDouble(Double::doubleValue).sum(), commands);
            }
            if (other > 0 || socketErrors > 0) {
                row.note(other + " answers neither 200 nor 429, " + socketErrors + " socket errors (wrk logs in "
                        + context.logDir().resolve("server") + ")");
            }
        } catch (IllegalStateException e) {
            row.note("failed: " + e.getMessage());
        }
        return row.build();
    }

    private Measurement.Builder row(Shape shape, int connections) {
        RedisLimits limit = RedisLimits.LOAD;
        return Measurement.of(name(), "sluice").variant(shape.variant()).mode("http")
                .algorithm(ALGORITHM).config(CEILING.equals(shape.variant())
                        ? "io.sluice.server.EmptyEndpoint: POST /v1/check answered with a constant 200, no store"
                        : limit.describe(ALGORITHM) + "; POST /v1/check, JSON")
                .keys(shape.keys()).threads(1).inFlight(connections);
    }

    private static final int WARMUP_STEP_SECONDS = 3;

    /**
     * The most a warm-up goes past its budget while its last step completed nothing. A short budget (a test's
     * tiny profile: 2 s) lets the rows be short, and the rows then need a path that answers: once a cold client on
     * a machine loaded 7 times past its cores completed no decision in a 2 s warm-up nor in its measured run.
     */
    static final int COLD_LIMIT_SECONDS = 60;

    /**
     * Whether a warm-up takes another step: within the budget until settled, as the warm-ups always did, and
     * beyond it (to {@link #COLD_LIMIT_SECONDS}) while the last step completed nothing.
     */
    static boolean warmingUp(int spent, int step, int budget, boolean settled, double lastRate) {
        if (spent + step <= budget && !settled) {
            return true;
        }
        return spent > 0 && lastRate <= 0 && spent + step <= Math.max(budget, COLD_LIMIT_SECONDS);
    }

    /**
     * The most a new server is warmed up: 60 times the Redis suite's warm-up (full: 60 s, quick: 12 s), at least
     * 2 s (wrk counts whole seconds).
     */
    static int serverWarmupSeconds(Profile profile) {
        return Math.max(2, profile.redisWarmupMillis() * 60 / 1000);
    }

    /** One measured run: twice the Redis suite's, in whole seconds, at least one. */
    static int runSeconds(Profile profile) {
        return Math.max(1, profile.redisRunMillis() * 2 / 1000);
    }

    /** The rules the server enforces: the Redis suite's limit, exactly and leased. */
    static Path writeRules(Path file) throws IOException {
        RedisLimits limit = RedisLimits.LOAD;
        String bucket = "{algorithm: token_bucket, capacity: " + limit.burst() + ", refill_tokens: " + limit.rate()
                + ", refill_period: " + limit.period().toMillis() + "ms}";
        Files.writeString(file, String.join("\n",
                "# sluice bench: the server suite's rules (RedisLimits.LOAD)",
                "limits:",
                "  per_key: " + bucket,
                "rules:",
                "  bench: {limits: [per_key]}",
                "  bench_leased: {limits: [per_key], mode: leased}",
                ""), StandardCharsets.UTF_8);
        return file;
    }

    private static double orNaN(Double value) {
        return value == null ? Double.NaN : value;
    }
}
