package io.sluice.bench.report;

import io.sluice.bench.Measurement;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Collectors;
import org.jfree.data.category.DefaultCategoryDataset;

/**
 * The Redis sections of docs/benchmarks.md: decisions per second and Redis cost against the Redis peers, the hot
 * key under attack, and memory per key, with charts.
 */
final class RedisSection extends ReportSection {

    RedisSection(ReportSection page) {
        super(page);
    }

    void write(Path chartDir) throws IOException {
        List<Measurement> redis = rows.where(m -> "redis".equals(m.suite()) && m.measured());
        if (redis.isEmpty()) {
            return;
        }
        line("## Redis: one permit per call, on one redis-server");
        line();
        line("A custom harness (not JMH: what matters is requests in flight, not a loop): *sync* runs as many threads "
                + "as requests in flight, each blocked on its call; *async* keeps that many calls outstanding from one "
                + "thread. Every system gets the same limit: 1,000 per second per key with bursts of 100 (Redisson has "
                + "no burst: 1,000 per 1 s window). The hot key is therefore mostly rejected, and each of the 10,000 "
                + "keys is mostly admitted. Each row is a warm-up then several measured runs back to back: "
                + "decisions/s and latencies are medians of the runs; Redis CPU (INFO CPU, user + system) and Redis "
                + "commands (INFO COMMANDSTATS, commands inside scripts included) are per decision over all runs; "
                + "*over-admitted* counts admissions beyond what the configured limit allows over the whole load, "
                + "summed over keys. *redis-benchmark* rows are the ceiling: `redis-benchmark` sending Sluice's own "
                + "script call, FCALL (EVALSHA where functions are refused), "
                + "captured with MONITOR, from 64 connections, no Java client involved. Bucket4j is its Lettuce "
                + "CAS proxy, with and without `Optimizations.batching()`; bare-lua is the smallest token-bucket script "
                + "called with EVALSHA through Lettuce, the floor of any Lua limiter.");
        line();
        List<String> references = references(redis.stream().filter(m -> !"redis-benchmark".equals(m.variant()))
                .toList());
        List<String> series = redisChartSeries(redis, references);
        int many = redis.stream().map(Measurement::keys).filter(Objects::nonNull).filter(k -> k > 1).findFirst()
                .orElse(10_000);
        for (int keys : List.of(1, many)) {
            List<Measurement> keyRows = redis.stream().filter(m -> Objects.equals(m.keys(), keys))
                    .sorted(redisOrder()).toList();
            if (keyRows.isEmpty()) {
                continue;
            }
            String title = keys == 1 ? "One hot key" : String.format(Locale.ROOT, "%,d keys", keys);
            String chart = keys == 1 ? "redis-hot-key.png" : "redis-many-keys.png";
            redisChart(chartDir.resolve(chart), title, keyRows, series);
            line("### " + title);
            line();
            line("![decisions per second, " + title.toLowerCase(Locale.ROOT) + "](bench/" + chart + ")");
            line();
            line("| mode | in flight | system | algorithm | decisions/s | p50 µs | p99 µs | Redis CPU µs/decision | "
                    + "Redis commands/decision | admitted | over-admitted" + ratioHeaders(references) + " |");
            line("| --- | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---:"
                    + " | ---:".repeat(references.size()) + " |");
            for (Measurement m : keyRows) {
                String system = m.system() + (m.variant() != null && !"plain".equals(m.variant()) ? " (" + m.variant() + ")" : "");
                line("| " + m.mode() + " | " + m.inFlight() + " | " + system + " | " + m.algorithm() + " | "
                        + Format.count(m.decisionsPerS()) + " | " + Format.decimal(m.p50Us(), 0) + " | "
                        + Format.decimal(m.p99Us(), 0) + " | " + Format.decimal(m.redisCpuUsPerDecision(), 1) + " | "
                        + Format.decimal(m.redisCmdsPerDecision(), 1) + " | " + Format.percent(m.admittedFraction())
                        + " | " + Format.count(m.overAdmitted()) + ratioCells(m, references) + " |");
            }
            line();
        }
        List<Measurement> byCommand = redis.stream().filter(m -> Objects.equals(m.keys(), 1)
                && Objects.equals(m.inFlight(), 64) && "async".equals(m.mode()) && m.redisCommandsPerDecision() != null)
                .sorted(redisOrder()).toList();
        if (!byCommand.isEmpty()) {
            line("Redis commands per decision by command (hot key, 64 in flight, async):");
            line();
            line("| system | algorithm | commands |");
            line("| --- | --- | --- |");
            for (Measurement m : byCommand) {
                String commands = m.redisCommandsPerDecision().entrySet().stream()
                        .map(e -> e.getKey() + " " + Format.decimal(e.getValue(), 2)).collect(Collectors.joining(", "));
                line("| " + m.system() + " | " + m.algorithm() + " | " + commands + " |");
            }
            line();
        }
    }

    void writeAttack() {
        List<Measurement> attack = rows.where(m -> "redis-attack".equals(m.suite()) && m.measured());
        if (attack.isEmpty()) {
            return;
        }
        Optional<Measurement> bare = attack.stream().filter(m -> "bare-lua".equals(m.system())).findFirst();
        line("## Redis: a hot key under attack");
        line();
        line("One key limited to 10 per second with bursts of 10 (a login form), 64 requests in flight from one "
                + "thread (async), as a password-guessing attack: after the first burst nearly every request is "
                + "denied. Sluice runs in exact mode as users get it, with cached denials on: a denial Redis has "
                + "just given is repeated locally, without a round trip, while Redis would still give it "
                + "(docs/cached-denials.md); *plain-nocache* is the same store with the cache off. The Redis load "
                + "rows above run with the cache off, so that they measure the script. Rows are measured as above; "
                + "over-admitted counts admissions beyond 10 + 10 per second over the whole load.");
        line();
        line("| system | algorithm | decisions/s | p50 µs | p99 µs | Redis CPU µs/decision | Redis commands/decision "
                + "| admitted | over-admitted | × bare-lua |");
        line("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
        for (Measurement m : attack) {
            String system = m.system() + (m.variant() != null && !"plain".equals(m.variant()) ? " (" + m.variant() + ")" : "");
            Double ratio = bare.map(b -> m.decisionsPerS() / b.decisionsPerS()).orElse(null);
            line("| " + system + " | " + m.algorithm() + " | " + Format.count(m.decisionsPerS()) + " | "
                    + Format.decimal(m.p50Us(), 0) + " | " + Format.decimal(m.p99Us(), 0) + " | "
                    + Format.decimal(m.redisCpuUsPerDecision(), 2) + " | " + Format.decimal(m.redisCmdsPerDecision(), 2)
                    + " | " + Format.percent(m.admittedFraction()) + " | " + Format.count(m.overAdmitted()) + " | "
                    + Format.ratio(ratio) + " |");
        }
        line();
    }

    /** Sluice's reference algorithms, every peer, and the ceiling of the first reference: a readable chart. */
    private static List<String> redisChartSeries(List<Measurement> redis, List<String> references) {
        List<String> series = new ArrayList<>();
        references.forEach(algorithm -> series.add("sluice " + algorithm));
        for (String peer : REDIS_ORDER.subList(1, REDIS_ORDER.size())) {
            if (redis.stream().anyMatch(m -> peer.equals(m.system()))) {
                series.add(peer);
            }
        }
        if (!references.isEmpty()) {
            series.add("sluice " + references.get(0) + " redis-benchmark");
        }
        return series;
    }

    private static void redisChart(Path file, String title, List<Measurement> keyRows, List<String> series)
            throws IOException {
        DefaultCategoryDataset data = new DefaultCategoryDataset();
        for (String mode : List.of("sync", "async", "redis-benchmark")) {
            for (Measurement m : keyRows) {
                if (!mode.equals(m.mode())) {
                    continue;
                }
                String name = m.system().equals("sluice") ? "sluice " + m.algorithm()
                        + ("redis-benchmark".equals(m.variant()) ? " redis-benchmark" : "") : m.system();
                if (series.contains(name)) {
                    data.addValue(m.decisionsPerS() / 1e3, name, mode + ", " + m.inFlight() + " in flight");
                }
            }
        }
        Charts.bars(file, "Redis, " + title.toLowerCase(Locale.ROOT) + ": thousand decisions per second (higher is better,"
                + " log scale)", null, "thousand decisions/s", data, true, true, 1100, 560);
    }

    void writeMemory(Path chartDir) throws IOException {
        List<Measurement> perKey = rows.where(m -> "memory".equals(m.suite()) && "one_request_per_key".equals(m.mode())
                && m.measured()).stream().sorted(redisOrder()).toList();
        List<Measurement> hour = rows.where(m -> "memory".equals(m.suite()) && "log_1h_10rps".equals(m.mode())
                && m.measured());
        if (perKey.isEmpty() && hour.isEmpty()) {
            return;
        }
        line("## Memory in Redis");
        line();
        if (!perKey.isEmpty()) {
            line(String.format(Locale.ROOT, "%,d keys, one request each, under a limit of 10 per day (so no state "
                    + "expires before it is measured). *bytes per key*: MEMORY USAGE (all samples) of every key left "
                    + "behind, over the number of keys, not counting keys that live only seconds (Sluice's request ids); *used_memory "
                    + "growth*: INFO used_memory after minus before, per key, which also counts Redis's own hash "
                    + "table growth.", perKey.get(0).keys()));
            line();
            DefaultCategoryDataset data = new DefaultCategoryDataset();
            for (Measurement m : perKey) {
                String name = m.system().equals("sluice") ? "sluice " + m.algorithm() : m.system();
                data.addValue(m.bytesPerKey(), "bytes per key", name);
            }
            Charts.bars(chartDir.resolve("memory.png"), "Redis memory per key, one request each (lower is better)",
                    null, "bytes per key (MEMORY USAGE)", data, false, 900, 80 + 32 * perKey.size());
            line("![bytes per key](bench/memory.png)");
            line();
            List<String> references = references(perKey);
            String reference = references.isEmpty() ? "token_bucket" : references.get(0);
            line("| system | algorithm | limit | bytes per key | used_memory growth per key | Sluice " + reference
                    + " ÷ this |");
            line("| --- | --- | --- | ---: | ---: | ---: |");
            Optional<Measurement> sluice = perKey.stream()
                    .filter(m -> "sluice".equals(m.system()) && reference.equals(m.algorithm())).findFirst();
            for (Measurement m : perKey) {
                Double ratio = "sluice".equals(m.system()) ? null
                        : sluice.map(t -> t.bytesPerKey() / m.bytesPerKey()).orElse(null);
                line("| " + m.system() + " | " + m.algorithm() + " | " + Format.cell(m.config()) + " | "
                        + Format.decimal(m.bytesPerKey(), 1) + " | " + Format.decimal(m.usedMemoryBytesPerKey(), 1)
                        + " | " + Format.ratio(ratio) + " |");
            }
            line();
        }
        if (!hour.isEmpty()) {
            line("One hour at 10 requests per second (36,000 requests per key on a virtual clock), limit 36,000 per "
                    + "hour: the sliding log keeps every request, the rolling window one counter per minute.");
            line();
            line("| algorithm | limit | bytes per key | sliding_log ÷ this |");
            line("| --- | --- | ---: | ---: |");
            Optional<Measurement> log = hour.stream().filter(m -> "sliding_log".equals(m.algorithm())).findFirst();
            for (Measurement m : hour) {
                Double ratio = log.map(l -> l.bytesPerKey() / m.bytesPerKey()).orElse(null);
                line("| " + m.algorithm() + " | " + Format.cell(m.config()) + " | " + Format.count(m.bytesPerKey())
                        + " | " + Format.ratio(ratio) + " |");
            }
            line();
        }
    }
}
