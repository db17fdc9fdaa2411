package io.sluice.redis.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.SharedRedis;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
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

    private static final List<WorkerProcess> nodes = new ArrayList<>();
    private static final String PREFIX = "syncfleet-" + UUID.randomUUID().toString().substring(0, 8);

    @BeforeAll
    static void startNodes() {
        for (int i = 0; i < NODES; i++) {
            nodes.add(startNode(i, RedisServer.shared().uri(), PREFIX));
        }
        for (WorkerProcess n : nodes) {
            n.expect("READY", Duration.ofSeconds(60));
        }
    }

    @AfterAll
    static void stopNodes() {
        nodes.forEach(WorkerProcess::quit);
        nodes.forEach(WorkerProcess::awaitExit);
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
        for (WorkerProcess n : nodes) {
            n.send("RUN " + c + " " + key + " " + startAt + " " + millis + " " + RATE);
        }
        Map<Long, Long> perWindow = new TreeMap<>();
        long errors = 0;
        long gap = 0;
        long sync = 0;
        List<long[]> times = new ArrayList<>();
        for (WorkerProcess n : nodes) {
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

    private static WorkerProcess startNode(int index, String uri, String prefix) {
        return WorkerProcess.start("synced fleet node " + index, prefix + "-" + index, "128m", SyncedFleetWorker.class,
                List.of(uri, prefix));
    }
}
