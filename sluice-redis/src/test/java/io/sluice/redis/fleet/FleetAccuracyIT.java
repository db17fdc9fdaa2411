package io.sluice.redis.fleet;

import io.sluice.redis.Topology;
import io.sluice.redis.StoredState;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.redis.internal.SluiceScript;
import io.sluice.testkit.redis.RedisCluster;
import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.SharedRedis;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The claim of the Redis store, measured: {@value #PROCESSES} JVM processes × {@value #THREADS} threads on one
 * key, for every algorithm that promises a hard bound, admit exactly what the limit allows over the run — zero
 * over-admission, and no lost admissions either — on standalone and on the 3-master cluster, with Redis
 * server time.
 *
 * <p>Each process is a {@link FleetWorker} started with this JVM's java and test classpath, once for the whole
 * run (JVM starts dominate the run time; {@link SharedFleet}, shared with {@link LeasedFleetIT}): each connects to the standalone server and to the cluster, and holds
 * an in-memory store for the control experiment. Each {@link FleetCase} is then run on all processes at once
 * (the same command written to every process), and the admitted counts are summed. The load is far above the bound (each process alone tries at least the
 * bound), so the total must be exactly {@link FleetCase#expected}. Cases run when the script has a port of
 * every algorithm they use; {@link #everyAlgorithmWithAHardBoundIsPortedAndMeasured} fails while any
 * hard-bound algorithm is missing, so nothing is silently left out.
 */
@ExtendWith({SharedRedis.class, SharedFleet.class})
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class FleetAccuracyIT {

    private static Fleet fleet;

    static final int PROCESSES = 4;
    static final int THREADS = 16;
    /** Each thread tries for at least this long (and until its process tried the bound) ... */
    private static final long MIN_MILLIS = 200;
    /**
     * ... and at most this long: a ceiling for a loaded machine (a process normally makes its attempts in well
     * under a second), far below the shortest time in which any case replenishes (59 minutes).
     */
    private static final long MAX_MILLIS = 30_000;
    /** The processes start each run at one wall-clock instant this far ahead of the command. */
    private static final long START_DELAY_MILLIS = 50;
    private static final Duration READY_WITHIN = Duration.ofSeconds(60);
    private static final Duration RUN_WITHIN = Duration.ofMillis(MAX_MILLIS).plusSeconds(30);

    /** The cases whose algorithms all have a Lua port in this build. */
    static List<FleetCase> measurable() {
        Set<String> ported = SluiceScript.get().algorithms();
        return Arrays.stream(FleetCase.values()).filter(c -> ported.containsAll(c.algorithms())).toList();
    }

    @BeforeAll
    static void joinFleet(Fleet shared) {
        fleet = shared;
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    @Order(1)
    void aFleetOfProcessesAdmitsExactlyTheBound(Topology topology) {
        List<FleetCase> cases = measurable();
        assertThat(cases).as("cases runnable with the ported algorithms").isNotEmpty();
        String prefix = fleet.prefix;
        SoftAssertions soft = new SoftAssertions();
        for (FleetCase c : cases) {
            Outcome o = fleet.run(topology, c);
            String what = topology + " " + c + ": " + o;
            System.out.println("fleet " + what);
            soft.assertThat(o.errors()).as(what + ": failed calls (each may or may not have been charged)")
                    .isZero();
            soft.assertThat(o.attempts()).as(what + ": the load must be far above the bound")
                    .isGreaterThanOrEqualTo(PROCESSES * c.bound());
            soft.assertThat(c.replenishedWithin(o.spanMicros()))
                    .as(what + ": the run must end before anything could be replenished").isZero();
            soft.assertThat(o.admitted()).as(what + ": admitted in total").isEqualTo(c.expected(o.spanMicros()));
            if (c.checkedLimit() != null) {
                String stateKey = prefix + ":{" + c.ruleName() + ":" + o.key() + "}:" + c.checkedLimit();
                StoredState state = topology.state(stateKey);
                soft.assertThat(state == null ? null : state.count())
                        .as(what + ": count of the looser fixed_window limit " + c.checkedLimit()
                                + " (a rejection by another limit charges it nothing)")
                        .isEqualTo(c.bound());
            }
        }
        soft.assertAll();
    }

    /**
     * The control experiment: the same fleet with an in-memory store in each process (state not shared)
     * admits the bound once per process, and the harness sees it. So an exact total above is the store's
     * doing, not the harness's.
     */
    @Test
    @Order(2)
    void controlFleetWithoutSharedStateOverAdmitsAndIsCaught() {
        FleetCase c = FleetCase.FIXED_WINDOW_FIRST_REQUEST;
        Outcome o = fleet.run(null, c);
        System.out.println("fleet control (memory store per process) " + c + ": " + o);
        assertThat(o.errors()).isZero();
        assertThat(o.admitted()).as("over-admission of processes that share nothing: " + o)
                .isEqualTo(PROCESSES * c.bound());
    }

    @Test
    @Order(3)
    void everyAlgorithmWithAHardBoundIsPortedAndMeasured() {
        Set<String> covered = new TreeSet<>();
        for (FleetCase c : FleetCase.values()) {
            covered.addAll(c.algorithms());
        }
        assertThat(covered).as("algorithms the fleet cases use").containsAll(FleetCase.HARD_BOUND);
        Set<String> missing = new TreeSet<>(FleetCase.HARD_BOUND);
        missing.removeAll(SluiceScript.get().algorithms());
        assertThat(missing).as("hard-bound algorithms without a Lua port, so not measured by the fleet; the cases"
                + " that ran: " + measurable()).isEmpty();
        assertThat(measurable()).containsExactly(FleetCase.values());
    }

    // ------------------------------------------------------------------------------------------------ the fleet

    /** One case's run: the key, totals over the fleet, per-process counts and the span by server time. */
    record Outcome(String key, long admitted, long attempts, long errors, long[] admittedPerProcess,
                   long spanMicros) {
        @Override
        public String toString() {
            return "admitted " + admitted + " of " + attempts + " attempts (per process "
                    + Arrays.stream(admittedPerProcess).mapToObj(Long::toString).collect(Collectors.joining("/"))
                    + ", " + Arrays.stream(admittedPerProcess).filter(a -> a > 0).count() + " of "
                    + admittedPerProcess.length + " processes admitted) on key " + key + " in " + spanMicros / 1000
                    + " ms of server time"
                    + (errors > 0 ? ", " + errors + " errors" : "");
        }
    }

    /** The worker processes, each with a store per topology and one in memory (named MEMORY). */
    static final class Fleet implements AutoCloseable {
        private static final String MEMORY = "MEMORY";

        final String prefix;
        private final List<WorkerProcess> workers;

        private Fleet(String prefix, List<WorkerProcess> workers) {
            this.prefix = prefix;
            this.workers = workers;
        }

        static Fleet start(String prefix) {
            List<String> stores = List.of(Topology.STANDALONE + "=" + RedisServer.shared().uri(),
                    Topology.CLUSTER + "=cluster:" + RedisCluster.shared().uri(), MEMORY + "=memory");
            List<WorkerProcess> workers = new ArrayList<>();
            Fleet fleet = new Fleet(prefix, workers);
            try {
                for (int i = 0; i < PROCESSES; i++) {
                    workers.add(startWorker(i, prefix, stores));
                }
                for (WorkerProcess w : workers) {
                    w.expect("READY", READY_WITHIN);
                }
                return fleet;
            } catch (RuntimeException | Error e) {
                fleet.close();
                throw e;
            }
        }

        /**
         * Runs the case on every process at once, on the topology (null: each process's own memory store). A
         * run that straddled a boundary of the case's epoch-aligned period (which would restart the limit
         * mid-run) is repeated once on a fresh key: runs take seconds and the periods are 366 days, so the
         * second cannot straddle too.
         */
        Outcome run(Topology topology, FleetCase c) {
            String store = topology == null ? MEMORY : topology.name();
            for (int attempt = 1; attempt <= 2; attempt++) {
                String key = FleetCase.KEY + "-" + attempt;
                long before = serverMicros(topology);
                long startAt = System.currentTimeMillis() + START_DELAY_MILLIS;
                for (WorkerProcess w : workers) {
                    w.send("RUN " + store + " " + c.name() + " " + key + " " + startAt);
                }
                long admitted = 0;
                long attempts = 0;
                long errors = 0;
                long[] perProcess = new long[workers.size()];
                for (int i = 0; i < workers.size(); i++) {
                    String[] done = workers.get(i).expect("DONE " + store + " " + c.name() + " " + key + " ",
                            RUN_WITHIN).split(" ");
                    perProcess[i] = Long.parseLong(done[4]);
                    admitted += perProcess[i];
                    attempts += Long.parseLong(done[5]);
                    errors += Long.parseLong(done[6]);
                }
                long after = serverMicros(topology);
                long period = c.alignedPeriodMicros();
                if (period > 0 && before / period != after / period) {
                    System.out.println("fleet " + store + " " + c + ": the run straddled a window boundary;"
                            + " repeating it on a fresh key");
                    continue;
                }
                return new Outcome(key, admitted, attempts, errors, perProcess, after - before);
            }
            throw new AssertionError(c + ": two runs straddled a boundary of " + c.alignedPeriodMicros() + " us");
        }

        /**
         * Runs a case in a local-first mode ({@code RUN ... <mode>}, see {@link FleetModeRuns}) on every process
         * at once, with no repetition, and returns each process's {@code DONE} line split into words.
         */
        List<String[]> runInMode(Topology topology, String caseName, String key, String mode) {
            long startAt = System.currentTimeMillis() + START_DELAY_MILLIS;
            for (WorkerProcess w : workers) {
                w.send("RUN " + topology.name() + " " + caseName + " " + key + " " + startAt + " " + mode);
            }
            List<String[]> done = new ArrayList<>();
            for (WorkerProcess w : workers) {
                done.add(w.expect("DONE " + topology.name() + " " + caseName + " " + key + " ", RUN_WITHIN)
                        .split(" "));
            }
            return done;
        }

        static long serverMicros(Topology topology) {
            if (topology == null) {
                return System.currentTimeMillis() * 1000;
            }
            List<?> t = (List<?>) topology.nodes().get(0).call("TIME");
            return Long.parseLong((String) t.get(0)) * 1_000_000 + Long.parseLong((String) t.get(1));
        }

        @Override
        public void close() {
            for (WorkerProcess w : workers) {
                w.quit();
            }
            for (WorkerProcess w : workers) {
                w.awaitExit();
            }
        }
    }

    /** One {@link FleetWorker} process. */
    private static WorkerProcess startWorker(int index, String prefix, List<String> stores) {
        List<String> args = new ArrayList<>(List.of(prefix, Integer.toString(THREADS), Long.toString(MIN_MILLIS),
                Long.toString(MAX_MILLIS)));
        args.addAll(stores);
        return WorkerProcess.start("fleet worker " + index, prefix + "-" + index, "192m", FleetWorker.class, args);
    }
}
