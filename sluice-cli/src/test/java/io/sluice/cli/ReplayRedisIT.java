package io.sluice.cli;

import static io.sluice.cli.ReplayRun.replay;
import static io.sluice.cli.ReplayRun.resource;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Limit;
import io.sluice.redis.internal.SluiceScript;
import io.sluice.rules.RuleFile;
import io.sluice.testkit.redis.RedisCluster;
import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.RespConnection;
import io.sluice.testkit.redis.SharedRedis;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code sluice replay --store redis://...}: the same trace through the in-memory store and through Redis
 * (client time = the trace's clock) gives the same output byte for byte, for every golden trace of
 * {@code src/test/resources/replay/} whose algorithms have a Lua port; on standalone for all of them, on the
 * 3-master cluster for one. {@link #everyGoldenTraceIsPorted} fails while any golden trace's algorithm has no
 * port, so none is silently left out.
 */
@ExtendWith(SharedRedis.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ReplayRedisIT {

    /** The trace replayed on the cluster: two rules (so keys in several slots), set_limit, count_rejected. */
    private static final String CLUSTER_TRACE = "fixed_window";

    /** Every golden trace: {@code NAME.yaml}, {@code NAME.jsonl} and {@code NAME.expected.jsonl}. */
    static List<String> goldenTraces() {
        Path dir = resource(CLUSTER_TRACE + ".yaml").getParent();
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".expected.jsonl"))
                    .map(n -> n.substring(0, n.length() - ".expected.jsonl".length())).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The golden traces whose rules use only algorithms the Redis script runs. */
    static List<String> portedTraces() {
        Set<String> ported = SluiceScript.get().algorithms();
        return goldenTraces().stream().filter(name -> ported.containsAll(algorithms(name))).toList();
    }

    private static Set<String> algorithms(String trace) {
        try {
            return RuleFile.read(resource(trace + ".yaml")).limits().values().stream().map(Limit::algorithm)
                    .collect(Collectors.toCollection(TreeSet::new));
        } catch (Exception e) {
            throw new IllegalStateException("cannot read the rules of golden trace " + trace, e);
        }
    }

    @ParameterizedTest
    @MethodSource("portedTraces")
    @Order(1)
    void redisDecidesEveryGoldenTraceByteForByteAsMemoryDoes(String trace, RedisServer redis) throws IOException {
        assertSameOnRedis(trace, redis.uri());
    }

    @Test
    @Order(2)
    void theClusterDecidesATraceByteForByteAsMemoryDoes(RedisCluster cluster) throws IOException {
        assertThat(cluster.seedUris()).as("two or more seeds make a cluster store").hasSizeGreaterThan(1);
        assertSameOnRedis(CLUSTER_TRACE, cluster.uri());
    }

    /** try_all over keys of one {tag}: one slot, so the cluster decides them together as memory does. */
    @Test
    @Order(2)
    void theClusterDecidesTargetsOfOneSlotTogetherAsMemoryDoes(RedisCluster cluster) throws IOException {
        assertSameOnRedis("together", cluster.uri());
    }

    /** try_all over keys in different slots: a clear error naming the line and what to do, exit 1. */
    @Test
    @Order(2)
    void theClusterRefusesTargetsInDifferentSlots(RedisCluster cluster, @TempDir Path dir) throws IOException {
        Path trace = dir.resolve("slots.jsonl");
        Files.writeString(trace, "{\"t_ms\": 1767225600000, \"op\": \"try_all\", \"rule\": \"user\", "
                + "\"keys\": [\"u1\", \"u2\", \"u3\"]}\n");
        ReplayRun run = replay("--rules", resource("together.yaml"), "--trace", trace, "--store", cluster.uri());

        assertThat(run.exitCode()).isEqualTo(1);
        assertThat(run.err()).startsWith("sluice replay: " + trace + ":1: keys: targets user/'u1'")
                .contains("hash to different Redis Cluster slots").contains("{tag}").doesNotContain("Exception");
    }

    private static void assertSameOnRedis(String trace, String store) throws IOException {
        ReplayRun memory = replay("--rules", resource(trace + ".yaml"), "--trace", resource(trace + ".jsonl"));
        ReplayRun redis = replay("--rules", resource(trace + ".yaml"), "--trace", resource(trace + ".jsonl"),
                "--store", store);

        assertThat(memory.out()).isEqualTo(Files.readString(resource(trace + ".expected.jsonl")));
        assertThat(redis.err()).isEmpty();
        assertThat(redis.exitCode()).isZero();
        assertThat(redis.out()).as(trace + " on " + store).isEqualTo(memory.out());
    }

    /**
     * Each run starts from clean state (a fresh random prefix), and each rules file of one run has its own
     * namespace: the same rules file twice, main and compared, must summarize as the in-memory replay does,
     * twice in a row on the same Redis. A shared namespace would let the second file (or the second run) find
     * the first one's counters and reject more.
     */
    @Test
    @Order(3)
    void eachRulesFileAndEachRunHasItsOwnCleanNamespace(RedisServer redis, @TempDir Path dir) throws IOException {
        Path rules = resource(CLUSTER_TRACE + ".yaml");
        Path trace = resource(CLUSTER_TRACE + ".jsonl");
        ReplayRun memory = replay("--rules", rules, "--trace", trace, "--summary", "--compare", rules);
        Set<String> seen = replayPrefixes(redis);
        for (int run = 1; run <= 2; run++) {
            Path out = dir.resolve("decisions-" + run + ".jsonl");
            ReplayRun onRedis = replay("--rules", rules, "--trace", trace, "--store", redis.uri(), "--out", out,
                    "--summary", "--compare", rules);

            assertThat(onRedis.exitCode()).as(onRedis.err()).isZero();
            assertThat(onRedis.out()).as("run " + run)
                    .isEqualTo(memory.out().replace("(store memory)", "(store " + redis.uri() + ")"));
            assertThat(Files.readString(out)).isEqualTo(Files.readString(resource(CLUSTER_TRACE + ".expected.jsonl")));
            // Read at once: the last lines' keys live at least a second (their TTL's slack) after the run.
            Set<String> added = replayPrefixes(redis);
            added.removeAll(seen);
            assertThat(added).as("run " + run + ": one new namespace per rules file").hasSize(2);
            seen.addAll(added);
        }
    }

    /** The summary names the store without its password. */
    @Test
    @Order(4)
    void theSummaryNamesTheStoreWithoutCredentials() {
        try (RedisServer own = RedisServer.start()) {
            own.call("CONFIG", "SET", "requirepass", "hunter2");
            ReplayRun run = replay("--rules", resource(CLUSTER_TRACE + ".yaml"), "--trace",
                    resource(CLUSTER_TRACE + ".jsonl"), "--store", own.uri().replace("redis://", "redis://:hunter2@"),
                    "--summary");

            assertThat(run.exitCode()).as(run.err()).isZero();
            assertThat(run.out()).contains("(store redis://***@127.0.0.1:" + own.port() + ")")
                    .doesNotContain("hunter2");
            // Without a password again, so that closing the server can shut it down.
            try (RespConnection c = RespConnection.open(RedisServer.HOST, own.port(), Duration.ofSeconds(5))) {
                c.call("AUTH", "hunter2");
                c.call("CONFIG", "SET", "requirepass", "");
            }
        }
    }

    /**
     * A burst far denser than Redis can replay in its own time: 5,000 requests within 50 ms of trace time,
     * which take seconds of real time. Redis counts the keys' TTLs in real time; the replay's store gives them an
     * hour of slack beyond their trace-time lifetime, so no live key expires early and the output is still the
     * library's, byte for byte (with the store's default second of slack this trace admitted more than memory).
     */
    @Test
    @Order(5)
    void aReplaySlowerThanTheTraceStillDecidesAsTheLibrary(RedisServer redis, @TempDir Path dir) throws IOException {
        Path rules = dir.resolve("rules.yaml");
        Files.writeString(rules, "limits:\n  per_second: {algorithm: fixed_window, limit: 5, window: 1s}\n");
        Path trace = dir.resolve("dense.jsonl");
        StringBuilder lines = new StringBuilder();
        for (int i = 0; i < 5_000; i++) {
            lines.append("{\"t_ms\": ").append(1767225600000L + i / 100)
                    .append(", \"key\": \"k\", \"limit\": \"per_second\"}\n");
        }
        Files.writeString(trace, lines);

        ReplayRun memory = replay("--rules", rules, "--trace", trace);
        ReplayRun onRedis = replay("--rules", rules, "--trace", trace, "--store", redis.uri());

        assertThat(onRedis.exitCode()).as(onRedis.err()).isZero();
        assertThat(onRedis.out()).isEqualTo(memory.out());
        assertThat(memory.out().lines().filter(l -> l.contains("\"allowed\":true")).count()).isEqualTo(5);
    }

    @Test
    @Order(6)
    void everyGoldenTraceIsPorted() {
        Set<String> missing = new TreeSet<>();
        for (String trace : goldenTraces()) {
            Set<String> unported = new TreeSet<>(algorithms(trace));
            unported.removeAll(SluiceScript.get().algorithms());
            if (!unported.isEmpty()) {
                missing.add(trace + " needs " + unported);
            }
        }
        assertThat(goldenTraces()).as("golden traces found").hasSizeGreaterThanOrEqualTo(12);
        assertThat(missing).as("golden traces the Redis store cannot replay yet (byte-for-byte checked: "
                + portedTraces() + ")").isEmpty();
    }

    /** The distinct {@code sluice-replay-<run>-<n>} prefixes of the keys in {@code redis}. */
    private static Set<String> replayPrefixes(RedisServer redis) {
        Set<String> prefixes = new TreeSet<>();
        for (Object key : (List<?>) redis.call("KEYS", "sluice-replay-*")) {
            String k = (String) key;
            prefixes.add(k.substring(0, k.indexOf(':')));
        }
        return prefixes;
    }
}
