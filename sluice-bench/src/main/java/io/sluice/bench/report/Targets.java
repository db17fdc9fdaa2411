package io.sluice.bench.report;

import io.sluice.bench.Measurement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The targets, checked against one run. A target whose rows are missing (a suite not run, an
 * algorithm without a Redis script yet) is listed as not measured rather than dropped. Ratios are of
 * decisions per second (higher is better) or of bytes, always between rows of the same run. Where a target
 * covers several cases (sync and async, one key and many), every case is shown and all must meet it.
 */
final class Targets {

    /** One target: what it asks, what was measured, whether it is met (null: not measured). */
    record Check(String target, String measured, Boolean met) {}

    /** "Scales to 2 threads on distinct keys", read as: two threads decide at least this much more. */
    static final double SCALING = 1.5;

    private static final List<String> FAST_ALGORITHMS = List.of("token_bucket", "gcra");
    private static final List<String> O1_ALGORITHMS = List.of("token_bucket", "gcra", "fixed_window",
            "sliding_window", "smooth_bursty", "leaky_bucket", "smooth_warming_up", "refresh_period");

    private final Rows rows;
    private final List<Check> checks = new ArrayList<>();

    private Targets(Rows rows) {
        this.rows = rows;
    }

    static List<Check> evaluate(Rows rows) {
        Targets t = new Targets(rows);
        t.redis();
        t.attack();
        t.modes();
        t.local();
        t.memory();
        t.remoteClient();
        t.serverCeiling();
        t.serverOnRedis();
        return t.checks;
    }

    /** Issue 14: one client process through RemoteStore, 64 in flight, ≥ 0.5× wrk on the same memory server. */
    private void remoteClient() {
        Cases cases = new Cases();
        for (Measurement client : rows.where(m -> "server".equals(m.suite()) && m.measured()
                && "memory/remote-client".equals(m.variant()))) {
            Double ratio = rows.find("server", "sluice", client.algorithm(), "http", client.keys(), null, null,
                    "memory").map(w -> client.decisionsPerS() / w.decisionsPerS()).orElse(null);
            cases.add(String.format(Locale.ROOT, "%,d keys", client.keys()), ratio, ratio != null && ratio >= 0.5,
                    Format.ratio(ratio));
        }
        if (!cases.parts.isEmpty()) {
            cases.check("sluice serve on memory, 64 in flight: one RemoteStore client ≥ 0.5× wrk's rate");
        }
    }

    /** Issue 14: sluice serve on the memory store ≥ 0.7× an empty endpoint of the same HTTP stack, same load. */
    private void serverCeiling() {
        Optional<Measurement> ceiling = rows.where(m -> "server".equals(m.suite()) && m.measured()
                && "empty-endpoint".equals(m.variant())).stream().findFirst();
        if (ceiling.isEmpty()) {
            return;
        }
        Cases cases = new Cases();
        for (Measurement m : rows.where(x -> "server".equals(x.suite()) && x.measured()
                && "memory".equals(x.variant()))) {
            Double ratio = m.decisionsPerS() / ceiling.get().decisionsPerS();
            cases.add(m.keys() == 1 ? "hot key" : String.format(Locale.ROOT, "%,d keys", m.keys()), ratio,
                    ratio >= 0.7, Format.ratio(ratio));
        }
        if (!cases.parts.isEmpty()) {
            cases.check("sluice serve on memory, 64 connections: ≥ 0.7× an empty endpoint of the same HTTP stack");
        }
    }

    /**
     * Issue 14: sluice serve on Redis ≥ 0.8× the library's rate for the same load (the Redis table's async Sluice
     * row of the same algorithm, keys and requests in flight), as the server table's "server ÷ library".
     */
    private void serverOnRedis() {
        Cases cases = new Cases();
        for (Measurement m : rows.where(x -> "server".equals(x.suite()) && x.measured()
                && "redis".equals(x.variant()))) {
            Double ratio = rows.find("redis", "sluice", m.algorithm(), "async", m.keys(), null, m.inFlight(), "plain")
                    .map(l -> m.decisionsPerS() / l.decisionsPerS()).orElse(null);
            cases.add(m.keys() == 1 ? "hot key" : String.format(Locale.ROOT, "%,d keys", m.keys()), ratio,
                    ratio != null && ratio >= 0.8, Format.ratio(ratio));
        }
        if (!cases.parts.isEmpty()) {
            cases.check("sluice serve on Redis, 64 connections: ≥ 0.8× the library's rate for the same load");
        }
    }

    /** Cases of one target; measured as "case ratio, case ratio", met when every case is. */
    private final class Cases {
        private final List<String> parts = new ArrayList<>();
        private boolean allMeasured = true;
        private boolean allMet = true;

        void add(String label, Double value, boolean met, String formatted) {
            if (value == null || value.isNaN()) {
                allMeasured = false;
                parts.add(label + ": " + Format.NONE);
                return;
            }
            allMet &= met;
            parts.add(label + ": " + formatted);
        }

        void check(String target) {
            checks.add(new Check(target, String.join(", ", parts), allMeasured ? allMet : null));
        }
    }

    private void redis() {
        for (String algorithm : FAST_ALGORITHMS) {
            redisRatio("Redis, hot key, 64 in flight: Sluice " + algorithm + " ≥ 20× Bucket4j (CAS proxy)",
                    algorithm, "bucket4j", 1, 20.0);
            redisRatio("Redis, hot key, 64 in flight: Sluice " + algorithm + " ≥ 2× Redisson", algorithm, "redisson",
                    1, 2.0);
            redisRatio("Redis, hot key, 64 in flight: Sluice " + algorithm + " ≥ 0.9× bare Lua", algorithm, "bare-lua",
                    1, 0.9);
        }
        int many = manyKeys();
        for (String algorithm : FAST_ALGORITHMS) {
            redisRatio(String.format(Locale.ROOT, "Redis, %,d keys, 64 in flight: Sluice %s ≥ 1.5× Bucket4j", many,
                    algorithm), algorithm, "bucket4j", many, 1.5);
            redisRatio(String.format(Locale.ROOT, "Redis, %,d keys, 64 in flight: Sluice %s ≥ 2× Redisson", many,
                    algorithm), algorithm, "redisson", many, 2.0);
        }
        for (String algorithm : FAST_ALGORITHMS) {
            Cases cases = new Cases();
            for (String mode : List.of("async", "sync")) {
                Double cpu = rows.find("redis", "sluice", algorithm, mode, 1, null, 64, "plain")
                        .map(Measurement::redisCpuUsPerDecision).orElse(null);
                cases.add(mode, cpu, cpu != null && cpu <= 8.0, Format.decimal(cpu, 1) + " µs");
            }
            Double alone = rows.find("redis", "sluice", algorithm, "redis-benchmark", 1, null, null, "redis-benchmark")
                    .map(Measurement::redisCpuUsPerDecision).orElse(null);
            cases.add("script alone (redis-benchmark)", alone, alone != null && alone <= 8.0,
                    Format.decimal(alone, 1) + " µs");
            cases.check("Redis CPU per decision ≤ 8 µs: Sluice " + algorithm + " (hot key, 64 in flight)");
        }
        // Issue 13: a rule of three limits is one script call too; it should cost less than 1.5× a rule of one.
        Cases three = new Cases();
        for (int keys : List.of(1, many)) {
            for (String mode : List.of("async", "sync")) {
                Optional<Measurement> one = rows.find("redis", "sluice", "token_bucket", mode, keys, null, 64, "plain");
                Optional<Measurement> of3 = rows.find("redis", "sluice", "token_bucket", mode, keys, null, 64,
                        "three_limits");
                Double ratio = one.isPresent() && of3.isPresent() && one.get().redisCpuUsPerDecision() != null
                        && of3.get().redisCpuUsPerDecision() != null && one.get().redisCpuUsPerDecision() > 0
                        ? of3.get().redisCpuUsPerDecision() / one.get().redisCpuUsPerDecision() : null;
                three.add(String.format(Locale.ROOT, "%s, %,d %s", mode, keys, keys == 1 ? "key" : "keys"), ratio,
                        ratio != null && ratio < 1.5, Format.ratio(ratio));
            }
        }
        three.check("Redis, 64 in flight: Sluice token_bucket, a rule of three limits < 1.5× the Redis CPU per"
                + " decision of a rule of one");
    }

    /** The local-first modes' targets (issue: local-first modes and failure policies). */
    private void modes() {
        for (String algorithm : FAST_ALGORITHMS) {
            Cases vsBatch = new Cases();
            Cases commands = new Cases();
            Cases cpu = new Cases();
            for (String mode : List.of("async", "sync")) {
                Optional<Measurement> leased = rows.find("redis", "sluice", algorithm, mode, 1, null, 64, "leased");
                Optional<Measurement> plain = rows.find("redis", "sluice", algorithm, mode, 1, null, 64, "plain");
                Optional<Measurement> coalesced = rows.find("redis", "sluice", algorithm, mode, 1, null, 64,
                        "coalesced");
                Optional<Measurement> batch = rows.find("redis", "bucket4j-batch", null, mode, 1, null, 64, null);
                Double ratio = leased.isPresent() && batch.isPresent()
                        ? leased.get().decisionsPerS() / batch.get().decisionsPerS() : null;
                long over = leased.map(m -> m.overAdmitted() == null ? 0L : m.overAdmitted()).orElse(0L);
                vsBatch.add(mode, ratio, ratio != null && ratio >= 2.0 && over == 0,
                        Format.ratio(ratio) + (over == 0 ? "" : ", " + over + " over-admitted"));
                Double fewer = leased.isPresent() && plain.isPresent() && leased.get().redisCmdsPerDecision() != null
                        && plain.get().redisCmdsPerDecision() != null && leased.get().redisCmdsPerDecision() > 0
                        ? plain.get().redisCmdsPerDecision() / leased.get().redisCmdsPerDecision() : null;
                commands.add(mode, fewer, fewer != null && fewer >= 20.0, Format.ratio(fewer) + " fewer");
                Double share = coalesced.isPresent() && plain.isPresent()
                        && coalesced.get().redisCpuUsPerDecision() != null && plain.get().redisCpuUsPerDecision() != null
                        ? coalesced.get().redisCpuUsPerDecision() / plain.get().redisCpuUsPerDecision() : null;
                cpu.add(mode, share, share != null && share <= 0.5, Format.ratio(share) + " of plain");
            }
            vsBatch.check("Redis, hot key, 64 in flight: Sluice " + algorithm
                    + " leased ≥ 2× Bucket4j batching, zero over-admission");
            commands.check("Redis, hot key, 64 in flight: Sluice " + algorithm
                    + " leased ≥ 20× fewer Redis commands per decision than plain");
            cpu.check("Redis, hot key, 64 in flight: Sluice " + algorithm
                    + " coalesced Redis CPU per decision ≤ ½ of plain");
        }
    }

    private void redisRatio(String target, String algorithm, String peer, int keys, double atLeast) {
        Cases cases = new Cases();
        for (String mode : List.of("async", "sync")) {
            Double ratio = ratio("redis", algorithm, peer, mode, keys, null, 64);
            cases.add(mode, ratio, ratio != null && ratio >= atLeast, Format.ratio(ratio));
        }
        cases.check(target);
    }

    private int manyKeys() {
        return rows.where(m -> "redis".equals(m.suite()) && m.keys() != null && m.keys() > 1).stream()
                .map(Measurement::keys).findFirst().orElse(10_000);
    }

    private void local() {
        for (String algorithm : FAST_ALGORITHMS) {
            for (String peer : List.of("bucket4j", "guava")) {
                boolean strict = peer.equals("guava");   // "faster than Guava", "no slower than Bucket4j"
                Cases cases = new Cases();
                for (String mode : List.of("always_granted", "mostly_rejected")) {
                    for (int keys : List.of(1, 10_000)) {
                        Double ratio = ratio("local", algorithm, peer, mode, keys, 1, null);
                        cases.add(mode.replace('_', ' ') + String.format(Locale.ROOT, ", %,d %s", keys,
                                keys == 1 ? "key" : "keys"), ratio,
                                ratio != null && (strict ? ratio > 1.0 : ratio >= 1.0), Format.ratio(ratio));
                    }
                }
                cases.check("Local, 1 thread: Sluice " + algorithm + (strict ? " faster than Guava (> 1×)"
                        : " no slower than Bucket4j lock-free (≥ 1×)"));
            }
        }
        for (String algorithm : FAST_ALGORITHMS) {
            // Issue 13: the in-process path allocates at most 64 bytes per decision (Guava allocates none).
            Cases cases = new Cases();
            for (String mode : List.of("always_granted", "mostly_rejected")) {
                Double bytes = rows.find("local", "sluice", algorithm, mode, 1, 1, null, null)
                        .map(Measurement::allocBytesPerOp).orElse(null);
                cases.add(mode.replace('_', ' '), bytes, bytes != null && bytes <= 64, Format.decimal(bytes, 0) + " B");
            }
            cases.check("Local, 1 thread, 1 key: Sluice " + algorithm + " allocates ≤ 64 bytes per decision");
        }
        for (String algorithm : FAST_ALGORITHMS) {
            Cases cases = new Cases();
            for (String mode : List.of("always_granted", "mostly_rejected")) {
                Optional<Measurement> one = rows.find("local", "sluice", algorithm, mode, 10_000, 1, null, null);
                Optional<Measurement> two = rows.find("local", "sluice", algorithm, mode, 10_000, 2, null, null);
                Double ratio = one.isPresent() && two.isPresent()
                        ? two.get().decisionsPerS() / one.get().decisionsPerS() : null;
                cases.add(mode.replace('_', ' '), ratio, ratio != null && ratio >= SCALING, Format.ratio(ratio));
            }
            cases.check("Local, 10,000 keys: Sluice " + algorithm + " on 2 threads (distinct keys) ≥ " + SCALING
                    + "× 1 thread");
        }
    }

    private void memory() {
        // Issue 13: 100 bytes for the two algorithms with the smallest states, 120 for the other O(1) ones.
        Cases buckets = new Cases();
        Cases others = new Cases();
        for (String algorithm : O1_ALGORITHMS) {
            Double bytes = rows.find("memory", "sluice", algorithm, "one_request_per_key", null, null, null, null)
                    .map(Measurement::bytesPerKey).orElse(null);
            boolean bucket = algorithm.equals("token_bucket") || algorithm.equals("gcra");
            int most = bucket ? 100 : 120;
            (bucket ? buckets : others).add(algorithm, bytes, bytes != null && bytes <= most,
                    Format.decimal(bytes, 0));
        }
        buckets.check("Memory: ≤ 100 bytes per key (MEMORY USAGE) for Sluice's token_bucket and gcra");
        others.check("Memory: ≤ 120 bytes per key (MEMORY USAGE) for Sluice's other O(1) algorithms");
        Optional<Measurement> log = rows.find("memory", "sluice", "sliding_log", "log_1h_10rps", null, null, null, null);
        Optional<Measurement> rolling = rows.find("memory", "sluice", "rolling_window", "log_1h_10rps", null, null, null,
                null);
        Double ratio = log.isPresent() && rolling.isPresent()
                ? log.get().bytesPerKey() / rolling.get().bytesPerKey() : null;
        Cases hour = new Cases();
        hour.add("sliding_log ÷ rolling_window", ratio, ratio != null && ratio >= 100, Format.ratio(ratio));
        hour.check("Memory, 1 h at 10 requests/s: rolling window ≥ 100× smaller than the sliding log");
    }

    /** A hot key under attack (redis-attack): Sluice exact mode, cached denials on, against the bare script. */
    private void attack() {
        Optional<Measurement> sluice = rows.find("redis-attack", "sluice", "token_bucket", null, 1, null, null, "plain");
        Optional<Measurement> bare = rows.find("redis-attack", "bare-lua", null, null, 1, null, null, null);
        Double ratio = sluice.isPresent() && bare.isPresent()
                ? sluice.get().decisionsPerS() / bare.get().decisionsPerS() : null;
        Long over = sluice.map(Measurement::overAdmitted).orElse(null);
        Cases cases = new Cases();
        cases.add("÷ bare Lua", ratio, ratio != null && ratio >= 10, Format.ratio(ratio));
        cases.add("over-admitted", over == null ? null : over.doubleValue(), over != null && over == 0,
                Format.count(over));
        cases.check("Redis, hot key under attack (10 per second, 64 in flight): Sluice exact ≥ 10× bare Lua, "
                + "0 over-admitted");
    }

    /** Sluice's {@code algorithm} over {@code peer} in decisions per second, same suite, mode, keys and load. */
    private Double ratio(String suite, String algorithm, String peer, String mode, int keys, Integer threads,
                         Integer inFlight) {
        String variant = suite.equals("redis") ? "plain" : null;
        Optional<Measurement> sluice = rows.find(suite, "sluice", algorithm, mode, keys, threads, inFlight, variant);
        Optional<Measurement> other = rows.find(suite, peer, null, mode, keys, threads, inFlight, null);
        if (sluice.isEmpty() || other.isEmpty()) {
            return null;
        }
        return sluice.get().decisionsPerS() / other.get().decisionsPerS();
    }
}
