package io.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.SharedRedis;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Synced mode's bound, measured: {@value #NODES} JVM processes ({@link SyncedFleetWorker}) on one key, each sending
 * {@value #RATE} requests a second, against a fixed window and a sliding window of
 * {@value SyncedFleetWorker#LIMIT} a second, synced every 50 ms, on the shared Redis with server time.
 *
 * <p>The fleet asks for eight times the limit, so every window runs out and the nodes overshoot by what they admit
 * before a sync tells them. Per window, the fleet's admissions must stay within the bound of docs/synced-mode.md,
 * computed from what the run measured: {@code limit + the sum over all nodes but the busiest of a(D)}, where
 * {@code a(D)} is the most one node admitted within any span of {@code D} = the longest gap between two syncs of a
 * node plus the longest sync (one round trip). And it must be well below what the same fleet admits without
 * synced state, {@value #NODES} × the limit, which the control run (a memory store per process) shows.
 */
@ExtendWith(SharedRedis.class)
class SyncedFleetIT {

    static final int NODES = 4;
    static final int RATE = 2_000;
    private static final long RUN_MILLIS = 5_500;
    private static final long CONTROL_MILLIS = 2_500;
    private static final long START_DELAY_MILLIS = 100;
    private static final long LIMIT = SyncedFleetWorker.LIMIT;
    private static final long WINDOW_MICROS = SyncedFleetWorker.WINDOW.toNanos() / 1_000;

    private static final List<Node> nodes = new ArrayList<>();
    private static final String PREFIX = "syncfleet-" + UUID.randomUUID().toString().substring(0, 8);

    @BeforeAll
    static void startNodes() {
        for (int i = 0; i < NODES; i++) {
            nodes.add(Node.start(i, RedisServer.shared().uri(), PREFIX));
        }
        for (Node n : nodes) {
            n.expect("READY", Duration.ofSeconds(60));
        }
    }

    @AfterAll
    static void stopNodes() {
        nodes.forEach(Node::quit);
        nodes.forEach(Node::awaitExit);
    }

    @Test
    void aFixedWindowOvershootsByAtMostWhatTheOtherNodesAdmitWithinOneSyncSpan() {
        checkBound(run(SyncedFleetWorker.Case.FIXED, "hot-fixed", RUN_MILLIS));
    }

    @Test
    void aSlidingWindowOvershootsByAtMostWhatTheOtherNodesAdmitWithinOneSyncSpan() {
        checkBound(run(SyncedFleetWorker.Case.SLIDING, "hot-sliding", RUN_MILLIS));
    }

    /** The harness sees over-admission: unsynced, every process admits the whole limit in every window. */
    @Test
    void controlFleetWithoutSharedStateAdmitsTheLimitOncePerNode() {
        Outcome o = run(SyncedFleetWorker.Case.UNSYNCED, "hot-control", CONTROL_MILLIS);
        System.out.println("synced fleet control (memory store per process): " + o.perWindow());
        assertThat(o.errors()).isZero();
        assertThat(o.perWindow().values().stream().mapToLong(Long::longValue).max().orElseThrow())
                .as("a full window: each of the %d nodes admits the limit", NODES).isEqualTo(NODES * LIMIT);
    }

    private static void checkBound(Outcome o) {
        long span = o.maxSyncGapMicros() + o.maxSyncMicros();
        long[] spans = new long[NODES];
        for (int i = 0; i < NODES; i++) {
            spans[i] = mostWithin(o.times().get(i), span);
        }
        long[] sorted = spans.clone();
        Arrays.sort(sorted);
        long others = 0;
        for (int i = 1; i < NODES; i++) {
            others += sorted[i]; // all but the smallest: the N - 1 largest
        }
        long bound = LIMIT + others;
        long worst = o.perWindow().values().stream().mapToLong(Long::longValue).max().orElseThrow();
        System.out.printf("synced fleet %s: admitted per window %s; longest sync gap %d us + longest sync %d us = "
                        + "span D %d us; most admitted by one node within D %s; bound %d; worst window %d "
                        + "(overshoot %d, %.0f%% of the limit; unsynced worst case %d)%n",
                o.kind(), o.perWindow(), o.maxSyncGapMicros(), o.maxSyncMicros(), span, Arrays.toString(spans),
                bound, worst, worst - LIMIT, 100.0 * (worst - LIMIT) / LIMIT, NODES * LIMIT);
        SoftAssertions soft = new SoftAssertions();
        soft.assertThat(o.errors()).as("failed decisions").isZero();
        soft.assertThat(o.perWindow().values().stream().filter(v -> v >= LIMIT).count())
                .as("windows where the fleet used the whole limit (the load must saturate it)")
                .isGreaterThanOrEqualTo(4);
        o.perWindow().forEach((w, admitted) -> soft.assertThat(admitted)
                .as("window %d: within the bound %d computed from the measured span %d us", w, bound, span)
                .isLessThanOrEqualTo(bound));
        soft.assertThat(worst).as("well below the unsynced worst case %d", NODES * LIMIT)
                .isLessThanOrEqualTo(NODES * LIMIT / 2);
        soft.assertAll();
    }

    /** The most entries of a sorted list of times (µs) within any span of {@code span} µs. */
    static long mostWithin(long[] times, long span) {
        long best = 0;
        int from = 0;
        for (int to = 0; to < times.length; to++) {
            while (times[to] - times[from] > span) {
                from++;
            }
            best = Math.max(best, to - from + 1);
        }
        return best;
    }

    /** A run's outcome summed over the nodes: admitted per window index, and what each node measured. */
    record Outcome(String kind, Map<Long, Long> perWindow, long errors, long maxSyncGapMicros, long maxSyncMicros,
                   List<long[]> times) {}

    private static Outcome run(SyncedFleetWorker.Case c, String key, long millis) {
        long startAt = System.currentTimeMillis() + START_DELAY_MILLIS;
        for (Node n : nodes) {
            n.send("RUN " + c + " " + key + " " + startAt + " " + millis + " " + RATE);
        }
        Map<Long, Long> perWindow = new TreeMap<>();
        long errors = 0;
        long gap = 0;
        long sync = 0;
        List<long[]> times = new ArrayList<>();
        for (Node n : nodes) {
            String[] done = n.expect("DONE " + c + " " + key + " ", Duration.ofMillis(millis).plusSeconds(30))
                    .split(" ", -1);
            errors += Long.parseLong(done[5]);
            gap = Math.max(gap, Long.parseLong(done[6]));
            sync = Math.max(sync, Long.parseLong(done[7]));
            if (!done[8].isEmpty()) {
                for (String w : done[8].split(",")) {
                    String[] kv = w.split(":");
                    perWindow.merge(Long.parseLong(kv[0]), Long.parseLong(kv[1]), Long::sum);
                }
            }
            times.add(done[9].isEmpty() ? new long[0]
                    : Arrays.stream(done[9].split(",")).mapToLong(Long::parseLong).toArray());
        }
        return new Outcome(c.toString(), perWindow, errors, gap, sync, times);
    }

    /** One worker process, its output lines on a queue, its standard error in a log file. */
    private static final class Node {
        private static final String EOF = "\u0000EOF";

        private final int index;
        private final Process process;
        private final Writer stdin;
        private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        private final Path log;

        private Node(int index, Process process, Path log) {
            this.index = index;
            this.process = process;
            this.log = log;
            this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
            Thread reader = new Thread(this::readLines, "synced-fleet-node-" + index + "-stdout");
            reader.setDaemon(true);
            reader.start();
        }

        static Node start(int index, String uri, String prefix) {
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            List<String> command = List.of(java, "-cp", System.getProperty("java.class.path"), "-Xmx128m",
                    "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                    SyncedFleetWorker.class.getName(), uri, prefix);
            try {
                Path dir = Files.createDirectories(Path.of("target", "fleet-logs"));
                Path log = dir.resolve(prefix + "-" + index + ".log");
                return new Node(index, new ProcessBuilder(command).redirectError(log.toFile()).start(), log);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot start a synced fleet node: " + command, e);
            }
        }

        private void readLines() {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    lines.add(line);
                }
            } catch (IOException ignored) {
                // the process went away; EOF says so
            }
            lines.add(EOF);
        }

        void send(String command) {
            try {
                stdin.write(command + "\n");
                stdin.flush();
            } catch (IOException e) {
                throw new AssertionError("synced fleet node " + index + " is gone (" + e + "): " + logTail(), e);
            }
        }

        String expect(String start, Duration within) {
            String line;
            try {
                line = lines.poll(within.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while waiting for synced fleet node " + index, e);
            }
            if (line == null || line.equals(EOF) || !line.startsWith(start)) {
                throw new AssertionError("synced fleet node " + index + " printed " + (line == null ? "nothing"
                        : line.equals(EOF) ? "nothing more" : "'" + line.substring(0, Math.min(200, line.length()))
                        + "'") + ", expected '" + start + "...' within " + within + ": " + logTail());
            }
            return line;
        }

        void quit() {
            try {
                stdin.write("QUIT\n");
                stdin.close();
            } catch (IOException ignored) {
                // already gone
            }
        }

        void awaitExit() {
            try {
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                    process.waitFor(10, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                process.destroyForcibly();
            }
        }

        private String logTail() {
            try {
                List<String> all = Files.readAllLines(log, StandardCharsets.UTF_8);
                return log + ":\n" + String.join("\n", all.subList(Math.max(0, all.size() - 30), all.size()));
            } catch (IOException e) {
                return "(no log " + log + ": " + e + ")";
            }
        }
    }
}
