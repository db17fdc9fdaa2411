package io.sluice.bench.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.TokenBucket;
import io.sluice.redis.RedisStore;
import io.sluice.redis.Scripting;
import io.sluice.testkit.redis.RedisServer;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Redis's cost per decision of Sluice's exact mode run as a functions library ({@code FCALL}) and as a script
 * ({@code EVALSHA}), against the bare token-bucket script ({@link BareLuaContender#SCRIPT}), in one run on one
 * redis-server of its own, the three taking turns round by round so a change in the machine's load falls on all
 * three (not a test: it asserts nothing). Token bucket, 100 burst at 1,000 per second, 64 decisions in flight, one
 * hot key (mostly rejected) and 10,000 keys (mostly admitted); cached denials off, so every decision is one call.
 * Per decision it reads {@code INFO commandstats} (the script command's {@code usec_per_call}, and every command
 * Redis counted, the script's nested ones included, per decision) and {@code INFO cpu} (the main thread's CPU).
 * Commandstats time is wall-clock time that a loaded machine inflates; compare within a round.
 *
 * <p>{@code java -cp sluice-bench/target/sluice-bench.jar io.sluice.bench.redis.ScriptingCostProbe [decisions] [rounds]}
 */
public final class ScriptingCostProbe {

    private static final int IN_FLIGHT = 64;
    private static final Rule RULE = Rule.of("probe", TokenBucket.of(100, 1000, Duration.ofSeconds(1)));

    private ScriptingCostProbe() {}

    public static void main(String[] args) throws Exception {
        int decisions = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        try (RedisServer server = RedisServer.start();
             RedisStore functions = RedisStore.builder().uri(server.uri()).scripting(Scripting.FUNCTIONS)
                     .cacheDenials(false).timeout(Duration.ofSeconds(10)).build();
             RedisStore eval = RedisStore.builder().uri(server.uri()).scripting(Scripting.EVAL)
                     .cacheDenials(false).timeout(Duration.ofSeconds(10)).build()) {
            RedisClient client = RedisClient.create(server.uri());
            try (StatefulRedisConnection<String, String> bare = client.connect()) {
                String sha = bare.sync().scriptLoad(BareLuaContender.SCRIPT);
                String[] bareArgs = {"100", "1000.0", "1100"};
                Map<String, Function<String, CompletableFuture<?>>> contenders = new LinkedHashMap<>();
                contenders.put("FCALL", key -> functions.decideAsync(RULE, key, Request.tryAcquire(1)));
                contenders.put("EVALSHA", key -> eval.decideAsync(RULE, key, Request.tryAcquire(1)));
                contenders.put("bare script", key -> bare.async().<Long>evalsha(sha, ScriptOutputType.INTEGER,
                        new String[] {key}, bareArgs).toCompletableFuture());
                System.out.printf(Locale.ROOT, "load average %s%n", loadAverage());
                System.out.printf(Locale.ROOT, "%-5s %-6s %-12s %14s %12s %10s%n", "round", "keys", "contender",
                        "script usec", "cpu usec", "cmd/dec");
                for (int keys : new int[] {1, 10_000}) {
                    for (int r = 1; r <= rounds; r++) {
                        for (Map.Entry<String, Function<String, CompletableFuture<?>>> c : contenders.entrySet()) {
                            server.flushAll();
                            run(c.getValue(), keys, Math.min(decisions, 5_000));
                            server.call("CONFIG", "RESETSTAT");
                            double cpuBefore = mainThreadCpuMicros(server);
                            run(c.getValue(), keys, decisions);
                            double cpu = (mainThreadCpuMicros(server) - cpuBefore) / decisions;
                            double[] stats = commandStats(server);
                            System.out.printf(Locale.ROOT, "%-5d %-6d %-12s %14.2f %12.2f %10.2f%n", r, keys,
                                    c.getKey(), stats[0], cpu, stats[1] / decisions);
                        }
                    }
                }
                System.out.printf(Locale.ROOT, "load average %s%n", loadAverage());
            } finally {
                client.shutdown();
            }
        }
    }

    private static void run(Function<String, CompletableFuture<?>> call, int keys, int n) throws Exception {
        Semaphore slots = new Semaphore(IN_FLIGHT);
        CompletableFuture<?>[] failed = new CompletableFuture<?>[1];
        for (int i = 0; i < n; i++) {
            slots.acquire();
            CompletableFuture<?> f = call.apply("k" + (i % keys));
            f.whenComplete((v, e) -> {
                if (e != null) {
                    failed[0] = f;
                }
                slots.release();
            });
        }
        if (!slots.tryAcquire(IN_FLIGHT, 60, TimeUnit.SECONDS)) {
            throw new IllegalStateException("decisions did not complete");
        }
        if (failed[0] != null) {
            failed[0].get();
        }
    }

    /** The script command's usec_per_call (FCALL or EVALSHA, whichever ran) and the calls of every command. */
    private static double[] commandStats(RedisServer server) {
        double scriptUsec = 0;
        long calls = 0;
        for (String line : String.valueOf(server.call("INFO", "commandstats")).split("\r?\n")) {
            if (!line.startsWith("cmdstat_")) {
                continue;
            }
            String name = line.substring("cmdstat_".length(), line.indexOf(':'));
            if (name.equals("config") || name.equals("info")) {
                continue;   // the probe's own
            }
            for (String field : line.substring(line.indexOf(':') + 1).split(",")) {
                String[] kv = field.split("=");
                if (kv[0].equals("calls")) {
                    calls += Long.parseLong(kv[1]);
                } else if (kv[0].equals("usec_per_call") && (name.equals("fcall") || name.equals("evalsha"))) {
                    scriptUsec = Double.parseDouble(kv[1]);
                }
            }
        }
        return new double[] {scriptUsec, calls};
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

    private static String loadAverage() {
        try {
            return java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg")).trim();
        } catch (java.io.IOException e) {
            return "unknown";
        }
    }
}
