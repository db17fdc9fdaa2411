package io.sluice.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sluice.bench.redis.LocalRedis;
import io.sluice.cli.BenchOptions;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A tiny configuration of every suite runs and writes a bench-results.json that parses and carries every
 * field of the schema, and the report with its charts. It checks shape and meaning (an always-granted row
 * admitted everything), never speed: timings on a shared machine prove nothing.
 */
class BenchSmokeIT {

    /** Every field of a measurement, in the order of the schema (sluice-bench/README.md). */
    static final List<String> FIELDS = List.of("suite", "system", "variant", "mode", "algorithm", "config", "keys",
            "threads", "in_flight", "decisions_per_s", "p50_us", "p99_us", "ns_per_op", "ns_per_op_error",
            "alloc_bytes_per_op", "admitted_fraction", "redis_cpu_us_per_decision", "redis_cmds_per_decision",
            "redis_commands_per_decision", "bytes_per_key", "used_memory_bytes_per_key", "over_admitted", "rss_before_mb",
            "rss_after_mb", "runs", "note");

    /**
     * Every suite, as small as its code allows. The Redis rows' warm-up (40 ms) also sizes the server suite's:
     * 60 times it, 2 s per new server (its floor, one wrk step) instead of 6 s at 100 ms, and the eviction flood's
     * phases to that budget, 2 s each (two to fill, one alone, one flooded); a row's figures after so short a
     * warm-up are meaningless, and this test checks none of them, only that each row is there, measured and
     * consistent. A warm-up whose step completed nothing goes on past its budget, so a loaded machine still
     * measures every row.
     */
    private static final Profile TINY = new Profile("smoke-test", 0, 1, 100, 2, 100, List.of(1),
            List.of("token_bucket"), List.of(1), List.of("bucket4j"), 50, List.of(4), List.of("token_bucket"),
            List.of("token_bucket/leased"), List.of("bare-lua"), 40, 2, 150, 2_000, 50, 0, 1_000);

    @Test
    void aTinyRunWritesValidResultsAndTheReport(@TempDir Path dir) throws Exception {
        Path out = dir.resolve("bench-results.json");
        Path docs = dir.resolve("docs");
        BenchOptions options = new BenchOptions(false, BenchOptions.ALL_SUITES, out, docs, false, null);
        // JMH refuses to start while another JMH holds /tmp/jmh.lock (someone benchmarking on this machine); this
        // run measures nothing that such sharing would spoil.
        System.setProperty("jmh.ignoreLock", "true");
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        ByteArrayOutputStream errors = new ByteArrayOutputStream();

        int exit = new BenchRun(options, TINY, new PrintStream(console, true, StandardCharsets.UTF_8),
                new PrintStream(errors, true, StandardCharsets.UTF_8), dir.resolve("logs")).execute();
        // The progress lines carry the time of each step: where this test spends its time, in the test's output.
        System.out.print(console.toString(StandardCharsets.UTF_8));

        assertThat(exit).as(errors.toString(StandardCharsets.UTF_8)).isZero();
        JsonNode root = new ObjectMapper().readTree(out.toFile());
        assertThat(root.get("schema").asInt()).isEqualTo(BenchResults.SCHEMA);
        assertThat(root.get("profile").asText()).isEqualTo("smoke-test");
        assertThat(root.get("machine").get("nproc").asInt()).isPositive();
        assertThat(root.get("versions").get("bucket4j").asText()).matches("8\\..+");
        assertThat(fieldNames(root.get("versions"))).contains("sluice", "guava", "bucket4j", "resilience4j",
                "redisson", "lettuce", "jmh");

        List<JsonNode> measurements = new ArrayList<>();
        root.get("measurements").forEach(measurements::add);
        assertThat(measurements).isNotEmpty();
        for (JsonNode m : measurements) {
            assertThat(fieldNames(m)).as("fields of %s", m).containsExactlyElementsOf(FIELDS);
        }

        // local: 2 modes x (Sluice token_bucket, Bucket4j), all measured
        List<JsonNode> local = measurements.stream().filter(m -> m.get("suite").asText().equals("local")).toList();
        assertThat(local).hasSize(4);
        for (JsonNode m : local) {
            assertThat(m.get("note").isNull()).as("note of %s", m).isTrue();
            assertThat(m.get("ns_per_op").asDouble()).isPositive();
            assertThat(m.get("decisions_per_s").asDouble()).isPositive();
            assertThat(m.get("alloc_bytes_per_op").asDouble()).isNotNegative();
            assertThat(m.get("threads").asInt()).isEqualTo(1);
            assertThat(m.get("in_flight").isNull()).isTrue();
            if (m.get("mode").asText().equals("always_granted")) {
                assertThat(m.get("admitted_fraction").asDouble()).as("admitted of %s", m).isEqualTo(1.0);
            }
        }
        assertThat(local).extracting(m -> m.get("system").asText()).containsOnly("sluice", "bucket4j");

        List<JsonNode> redis = measurements.stream().filter(m -> m.get("suite").asText().equals("redis")).toList();
        List<JsonNode> memory = measurements.stream().filter(m -> m.get("suite").asText().equals("memory")).toList();
        // run-tests installs redis-server and wrk; without them this test fails here rather than skip
        assertThat(LocalRedis.onPath("redis-server")).as("redis-server on the PATH").isTrue();
        assertThat(LocalRedis.onPath("wrk")).as("wrk on the PATH").isTrue();
        JsonNode bareLua = redis.stream().filter(m -> m.get("system").asText().equals("bare-lua")
                && m.get("mode").asText().equals("async") && m.get("keys").asInt() == 1).findFirst().orElseThrow();
        assertThat(bareLua.get("decisions_per_s").asDouble()).isPositive();
        assertThat(bareLua.get("redis_cmds_per_decision").asDouble()).isPositive();
        assertThat(bareLua.get("redis_commands_per_decision").has("evalsha")).isTrue();
        assertThat(bareLua.get("over_admitted").asLong()).isZero();
        assertThat(bareLua.get("in_flight").asInt()).isEqualTo(4);
        JsonNode bareLuaMemory = memory.stream().filter(m -> m.get("system").asText().equals("bare-lua"))
                .findFirst().orElseThrow();
        assertThat(bareLuaMemory.get("bytes_per_key").asDouble()).isPositive();
        assertThat(root.get("versions").get("redis").asText()).isNotBlank();
        // Sluice's rows on Redis (plain and leased token_bucket): none over-admits
        List<JsonNode> sluiceOnRedis = redis.stream().filter(m -> m.get("system").asText().equals("sluice")
                && !m.get("variant").asText().equals("redis-benchmark")).toList();
        assertThat(sluiceOnRedis).extracting(m -> m.get("variant").asText()).contains("plain", "leased");
        for (JsonNode m : sluiceOnRedis) {
            // measured, or (a cold client on a loaded machine, in runs this short) says that nothing completed
            if (m.get("decisions_per_s").isNull()) {
                assertThat(m.get("note").asText()).as("%s", m).startsWith("no decision completed");
            } else {
                assertThat(m.get("decisions_per_s").asDouble()).as("%s", m).isPositive();
                assertThat(m.get("over_admitted").asLong()).as("%s", m).isZero();
            }
        }

        // redis-attack: one key under attack, Sluice with and without cached denials, bare-lua, Bucket4j
        List<JsonNode> attack = measurements.stream().filter(m -> m.get("suite").asText().equals("redis-attack"))
                .toList();
        assertThat(attack).extracting(m -> m.get("system").asText() + "/" + m.get("variant").asText(""))
                .containsExactly("sluice/plain", "sluice/plain-nocache", "bare-lua/", "bucket4j/");
        for (JsonNode m : attack) {
            if (m.get("decisions_per_s").isNull()) {
                assertThat(m.get("note").asText()).as("%s", m).startsWith("no decision completed");
            } else {
                assertThat(m.get("over_admitted").asLong()).as("%s", m).isZero();
                assertThat(m.get("in_flight").asInt()).isEqualTo(64);
                assertThat(m.get("keys").asInt()).isEqualTo(1);
            }
        }

        // server: sluice serve under wrk (run-tests installs wrk), memory store 2 rows, the empty endpoint (the
        // ceiling), Redis 3 (plain x 2, leased)
        List<JsonNode> flood = measurements.stream().filter(m -> m.get("suite").asText().equals("server")
                && m.get("variant").asText().equals("memory/eviction_flood")).toList();
        assertThat(flood).extracting(m -> m.get("mode").asText())
                .containsExactly("bystander_alone", "bystander_under_flood");
        for (JsonNode m : flood) {
            assertThat(m.get("p99_us").asDouble()).as("%s", m).isGreaterThanOrEqualTo(m.get("p50_us").asDouble());
        }
        JsonNode flooded = flood.get(1);
        assertThat(flooded.get("note").asText()).as("%s", flooded).startsWith("the flood: ");
        // RSS flat: a generous bound (the launcher's heap is 512 MiB), not a timing
        assertThat(flooded.get("rss_after_mb").asDouble()).as("%s", flooded)
                .isLessThan(flooded.get("rss_before_mb").asDouble() + 512);
        // the library as the server's client: sluice-client's RemoteStore on one HTTP/2 connection
        List<JsonNode> remote = measurements.stream().filter(m -> m.get("suite").asText().equals("server")
                && m.get("variant").asText().equals("memory/remote-client")).toList();
        assertThat(remote).singleElement().satisfies(m -> {
            assertThat(m.get("mode").asText()).isEqualTo("async");
            assertThat(m.get("decisions_per_s").asDouble()).as("%s", m).isPositive();
            assertThat(m.get("over_admitted").asLong()).as("%s", m).isZero();
        });
        List<JsonNode> server = measurements.stream().filter(m -> m.get("suite").asText().equals("server")
                && !m.get("variant").asText().equals("memory/eviction_flood")
                && !m.get("variant").asText().equals("memory/remote-client")).toList();
        assertThat(server).extracting(m -> m.get("variant").asText() + "/" + m.get("keys").asInt())
                .containsExactly("memory/1", "memory/50", "empty-endpoint/50", "redis/1", "redis/50",
                        "redis/leased/1");
        for (JsonNode m : server) {
            assertThat(m.get("note").isNull()).as("note of %s", m).isTrue();
            assertThat(m.get("decisions_per_s").asDouble()).as("%s", m).isPositive();
            assertThat(m.get("p99_us").asDouble()).as("%s", m).isGreaterThanOrEqualTo(m.get("p50_us").asDouble());
            assertThat(m.get("over_admitted").asLong()).as("%s", m).isZero();
            assertThat(m.get("in_flight").asInt()).isEqualTo(4);
            if (m.get("variant").asText().startsWith("redis")) {
                assertThat(m.get("redis_commands_per_decision").has("fcall"))
                        .as("Sluice on Redis 7 calls its functions library: %s", m).isTrue();
            } else {
                assertThat(m.get("redis_cpu_us_per_decision").isNull()).isTrue();
            }
        }
        assertThat(root.get("versions").get("wrk").asText()).startsWith("wrk");
        // 4 connections on 50 keys, each key's bucket holding 100: nothing is rejected
        assertThat(server.get(1).get("admitted_fraction").asDouble()).isEqualTo(1.0);

        List<JsonNode> replay = measurements.stream().filter(m -> m.get("suite").asText().equals("replay")).toList();
        assertThat(replay).singleElement().satisfies(m ->
                assertThat(!m.get("decisions_per_s").isNull() || !m.get("note").isNull()).isTrue());

        assertThat(docs.resolve("benchmarks.md")).content().contains("# Benchmarks", "## Targets", "## Local",
                "## Server", "## Redis: a hot key under attack", "Redis, hot key under attack");
        for (String chart : List.of("local-always-granted.png", "local-mostly-rejected.png", "server.png")) {
            byte[] png = Files.readAllBytes(docs.resolve("bench").resolve(chart));
            assertThat(png).startsWith((byte) 0x89, (byte) 'P', (byte) 'N', (byte) 'G');
        }
    }

    private static Set<String> fieldNames(JsonNode node) {
        Set<String> names = new LinkedHashSet<>();
        node.fieldNames().forEachRemaining(names::add);
        return names;
    }
}
