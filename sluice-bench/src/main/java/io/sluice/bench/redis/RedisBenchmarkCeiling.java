package io.sluice.bench.redis;

import io.sluice.bench.BenchContext;
import io.sluice.bench.Measurement;
import io.sluice.bench.Profile;
import io.sluice.redis.RedisStore;
import io.sluice.testkit.redis.RespConnection;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The ceiling: {@code redis-benchmark} sending Sluice's own EVALSHA as fast as Redis answers, with no Java
 * client in the way. The exact call is captured with MONITOR from two real decisions of the Redis store,
 * so it follows whatever the script's arguments become; the parts that differ between the two calls (the
 * request id that guards against replays, and its key) become {@code __rand_int__} so that every call is a
 * new request, and for the many-keys rows the key becomes {@code __rand_int__} too.
 */
final class RedisBenchmarkCeiling {

    private static final String PLACEHOLDER = "__rand_int__";

    List<Measurement> run(BenchContext context, LocalRedis redis, RespConnection admin) throws Exception {
        Profile profile = context.profile();
        String executable = LocalRedis.find("redis-benchmark");
        if (executable == null) {
            return List.of(note("skipped: redis-benchmark is not on the PATH"));
        }
        context.programVersion("redis-benchmark", version(executable));
        int inFlight = profile.inFlights().stream().mapToInt(Integer::intValue).max().orElse(64);
        List<Measurement> rows = new ArrayList<>();
        for (String algorithm : profile.redisSluiceAlgorithms()) {
            if (!context.selected("sluice", algorithm)) {
                continue;
            }
            List<String> call;
            try {
                call = capture(redis, admin, algorithm);
            } catch (Exception e) {
                rows.add(Measurement.of("redis", "sluice").variant("redis-benchmark").mode("redis-benchmark")
                        .algorithm(algorithm).note("cannot capture the script call: " + RedisSuite.message(e)).build());
                continue;
            }
            for (int keys : List.of(1, profile.manyKeys())) {
                Measurement row = measure(context, executable, redis, admin, algorithm, call, keys, inFlight);
                rows.add(row);
                context.progress().say("  redis-benchmark sluice %-14s %5d keys %2d clients: %,9.0f calls/s, %4.1f us CPU",
                        algorithm, keys, inFlight, row.decisionsPerS() == null ? Double.NaN : row.decisionsPerS(),
                        row.redisCpuUsPerDecision() == null ? Double.NaN : row.redisCpuUsPerDecision());
            }
        }
        return rows;
    }

    private static Measurement note(String note) {
        return Measurement.of("redis", "sluice").variant("redis-benchmark").mode("redis-benchmark").note(note).build();
    }

    /**
     * Two script calls of Sluice for the hot key (FCALL, or EVALSHA where the store fell back to it), as MONITOR
     * shows them, merged into one template.
     */
    private static List<String> capture(LocalRedis redis, RespConnection admin, String algorithm) {
        admin.call("FLUSHALL");
        List<List<String>> calls = new ArrayList<>();
        try (SluiceContender sluice = new SluiceContender(redis.uri(), algorithm, RedisLimits.LOAD,
                     RedisStore.Builder.DEFAULT_TIMEOUT);
             RespConnection monitor = RespConnection.open(LocalRedis.HOST, redis.port(), Duration.ofSeconds(10))) {
            sluice.tryAcquire(RedisSuite.HOT_KEY);   // loads the script before MONITOR starts
            monitor.call("MONITOR");
            sluice.tryAcquire(RedisSuite.HOT_KEY);
            sluice.tryAcquire(RedisSuite.HOT_KEY);
            while (calls.size() < 2) {
                String line = (String) monitor.readReply();
                List<String> args = parseMonitorLine(line);
                // Commands a script runs show up as "[0 lua]"; the client's own call is what is wanted.
                if (!args.isEmpty() && (args.get(0).equalsIgnoreCase("fcall") || args.get(0).equalsIgnoreCase("evalsha"))
                        && !line.contains(" lua]")) {
                    calls.add(args);
                }
            }
        }
        return template(calls.get(0), calls.get(1));
    }

    /**
     * The words of the call with what differs between two calls replaced by two placeholders (12 random
     * digits each: a request id never repeats within the script's replay window).
     */
    static List<String> template(List<String> first, List<String> second) {
        if (first.size() != second.size()) {
            throw new IllegalStateException("two calls of the script differ in length: " + first + " / " + second);
        }
        List<String> merged = new ArrayList<>(first.size());
        for (int i = 0; i < first.size(); i++) {
            String a = first.get(i);
            String b = second.get(i);
            if (a.equals(b)) {
                merged.add(a);
                continue;
            }
            int prefix = 0;
            while (prefix < Math.min(a.length(), b.length()) && a.charAt(prefix) == b.charAt(prefix)) {
                prefix++;
            }
            int suffix = 0;
            while (suffix < Math.min(a.length(), b.length()) - prefix
                    && a.charAt(a.length() - 1 - suffix) == b.charAt(b.length() - 1 - suffix)) {
                suffix++;
            }
            // Widen the difference to whole alphanumeric runs: "id.17" / "id.18" differ in "17", not in "7".
            while (prefix > 0 && Character.isLetterOrDigit(a.charAt(prefix - 1))) {
                prefix--;
            }
            while (suffix > 0 && Character.isLetterOrDigit(a.charAt(a.length() - suffix))) {
                suffix--;
            }
            merged.add(a.substring(0, prefix) + PLACEHOLDER + PLACEHOLDER + a.substring(a.length() - suffix));
        }
        return merged;
    }

    /** The quoted words of a MONITOR line: {@code 1700000000.1 [0 127.0.0.1:5000] "EVALSHA" "ab" ...}. */
    static List<String> parseMonitorLine(String line) {
        List<String> words = new ArrayList<>();
        int i = line.indexOf(']');
        if (i < 0) {
            return words;
        }
        StringBuilder word = null;
        for (i = i + 1; i < line.length(); i++) {
            char c = line.charAt(i);
            if (word == null) {
                if (c == '"') {
                    word = new StringBuilder();
                }
                continue;
            }
            if (c == '"') {
                words.add(word.toString());
                word = null;
            } else if (c == '\\' && i + 1 < line.length()) {
                char e = line.charAt(++i);
                switch (e) {
                    case 'n' -> word.append('\n');
                    case 'r' -> word.append('\r');
                    case 't' -> word.append('\t');
                    case 'a' -> word.append('\u0007');
                    case 'b' -> word.append('\b');
                    case 'x' -> {
                        word.append((char) Integer.parseInt(line.substring(i + 1, i + 3), 16));
                        i += 2;
                    }
                    default -> word.append(e);
                }
            } else {
                word.append(c);
            }
        }
        return words;
    }

    private static Measurement measure(BenchContext context, String executable, LocalRedis redis, RespConnection admin,
                                       String algorithm, List<String> template, int keys, int clients)
            throws IOException, InterruptedException {
        admin.call("FLUSHALL");
        List<String> call = new ArrayList<>(template);
        if (keys > 1) {
            // FCALL function numkeys key... (or EVALSHA sha numkeys key...): only the keys name the hot key.
            int numKeys = Integer.parseInt(template.get(2));
            boolean replaced = false;
            for (int i = 3; i < 3 + numKeys; i++) {
                String word = call.get(i);
                if (word.contains(RedisSuite.HOT_KEY)) {
                    call.set(i, word.replace(RedisSuite.HOT_KEY, "user:" + PLACEHOLDER));
                    replaced = true;
                }
            }
            if (!replaced) {
                return Measurement.of("redis", "sluice").variant("redis-benchmark").mode("redis-benchmark")
                        .algorithm(algorithm).keys(keys).note("no key of the captured call names the key " + call)
                        .build();
            }
        }
        // With many keys the random range is the key count; request ids carry two placeholders, so they
        // still come from 10^8 values.
        long range = keys == 1 ? 1_000_000_000L : keys;
        List<String> command = new ArrayList<>(List.of(executable, "-h", LocalRedis.HOST, "-p",
                Integer.toString(redis.port()), "-c", Integer.toString(clients), "-n",
                Integer.toString(context.profile().ceilingRequests()), "-r", Long.toString(range), "--csv"));
        command.addAll(call);
        Path log = context.logDir().resolve("redis-benchmark-" + algorithm + "-" + keys + ".csv");
        RedisStats before = RedisStats.take(admin);
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!process.waitFor(5, TimeUnit.MINUTES)) {
            process.destroyForcibly();
        }
        RedisStats after = RedisStats.take(admin);
        Measurement.Builder row = Measurement.of("redis", "sluice").variant("redis-benchmark")
                .mode("redis-benchmark").algorithm(algorithm).config(RedisLimits.LOAD.describe(algorithm)).keys(keys)
                .inFlight(clients).runs(1);
        List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
        String[] header = null;
        String[] values = null;
        for (String line : lines) {
            if (line.startsWith("\"test\"")) {
                header = csv(line);
            } else if (header != null && line.startsWith("\"")) {
                values = csv(line);
            }
        }
        if (process.exitValue() != 0 || header == null || values == null) {
            return row.note("redis-benchmark failed; see " + log).build();
        }
        long calls = context.profile().ceilingRequests();
        Map<String, Double> commands = after.commandsPerDecision(before, calls);
        row.decisionsPerS(column(header, values, "rps"))
                .latencyUs(column(header, values, "p50_latency_ms") * 1000, column(header, values, "p99_latency_ms") * 1000)
                .redisCpuUsPerDecision(after.cpuMicrosPerDecision(before, calls))
                .redisCommands(commands.values().stream().mapToDouble(Double::doubleValue).sum(), commands);
        long failed = after.failedCalls() - before.failedCalls();
        if (failed > 0) {
            row.note(failed + " calls failed in Redis; see " + log);
        }
        return row.build();
    }

    private static String[] csv(String line) {
        String[] cells = line.split(",");
        for (int i = 0; i < cells.length; i++) {
            cells[i] = cells[i].replace("\"", "");
        }
        return cells;
    }

    private static double column(String[] header, String[] values, String name) {
        for (int i = 0; i < header.length; i++) {
            if (header[i].equals(name) && i < values.length) {
                return Double.parseDouble(values[i]);
            }
        }
        return Double.NaN;
    }

    private static String version(String executable) {
        try {
            Process p = new ProcessBuilder(executable, "--version").redirectErrorStream(true).start();
            String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            p.waitFor(10, TimeUnit.SECONDS);
            // "redis-benchmark 7.0.15"
            String[] words = text.split("\\s+");
            return words.length > 1 ? words[1] : text;
        } catch (IOException e) {
            return "unknown";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }
}
