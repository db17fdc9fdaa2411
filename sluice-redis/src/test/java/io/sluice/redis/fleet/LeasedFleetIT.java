package io.sluice.redis.fleet;

import io.sluice.redis.Topology;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.SharedRedis;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Leased mode, measured on the fleet of {@link FleetAccuracyIT}: {@value FleetAccuracyIT#PROCESSES} JVM processes
 * × {@value FleetAccuracyIT#THREADS} threads on one key, with Redis server time and real clocks. The claim is
 * strict: across the fleet no limit admits more than it allows, however the leases are spread and whenever they
 * expire. Under-use (permits leased and never spent) is reported, and so are the script calls per decision,
 * counted by Redis ({@code INFO commandstats}).
 */
@ExtendWith({SharedRedis.class, SharedFleet.class})
class LeasedFleetIT {

    private static final String MODE = "leased";
    private static FleetAccuracyIT.Fleet fleet;

    @BeforeAll
    static void joinFleet(FleetAccuracyIT.Fleet shared) {
        // The run's fleet (SharedFleet), FleetAccuracyIT's too: this class's keys (bounded-*, refill-*, hot,
        // warm-up) are its own.
        fleet = shared;
        // Each process opens its leased-mode stores on the first run in the mode: do that before measuring.
        for (Topology topology : Topology.values()) {
            fleet.runInMode(topology, FleetCase.FIXED_WINDOW_EPOCH.name(), "warm-up", MODE);
        }
    }

    @ParameterizedTest
    @EnumSource(Topology.class)
    void aFleetNeverAdmitsMoreThanABoundThatDoesNotRefill(Topology topology) {
        SoftAssertions soft = new SoftAssertions();
        for (FleetCase c : List.of(FleetCase.FIXED_WINDOW_EPOCH, FleetCase.TOKEN_BUCKET, FleetCase.GCRA)) {
            Outcome o = run(topology, c.name(), "bounded-" + c.name());
            long allowed = c.alignedPeriodMicros() == 0 ? c.bound()
                    : c.bound() * (o.to / c.alignedPeriodMicros() - o.from / c.alignedPeriodMicros() + 1);
            String what = topology + " " + c + " leased: " + o.describe(allowed);
            System.out.println("leased fleet " + what);
            soft.assertThat(o.errors).as(what + ": failed calls").isZero();
            soft.assertThat(o.attempts).as(what + ": the load must be far above the bound")
                    .isGreaterThanOrEqualTo(FleetAccuracyIT.PROCESSES * c.bound());
            soft.assertThat(o.admitted).as(what + ": admitted in total, never above the bound")
                    .isLessThanOrEqualTo(allowed);
            soft.assertThat(o.granted).as(what + ": Redis never grants more than the bound either")
                    .isLessThanOrEqualTo(allowed);
            soft.assertThat(o.admitted).as(what + ": permits are admitted (the run is not vacuous)").isPositive();
        }
        soft.assertAll();
    }

    @Test
    void limitsThatRefillDuringTheRunAreNeverExceededAndLeasesEndWithTheirWindow() {
        Topology topology = Topology.STANDALONE;
        SoftAssertions soft = new SoftAssertions();
        for (LeasedFleetCase c : List.of(LeasedFleetCase.FIXED_WINDOW_ALTERNATING, LeasedFleetCase.TOKEN_BUCKET_REFILL,
                LeasedFleetCase.GCRA_REFILL)) {
            Outcome o = run(topology, c.name(), "refill-" + c.name());
            long allowed = c.allowed(o.from, o.to);
            String what = topology + " " + c + " leased: " + o.describe(allowed);
            System.out.println("leased fleet " + what);
            soft.assertThat(o.errors).as(what + ": failed calls").isZero();
            soft.assertThat(o.admitted).as(what + ": admitted over the run, never above what the limit allows")
                    .isLessThanOrEqualTo(allowed);
            soft.assertThat(o.admitted).as(what + ": most of it is used").isGreaterThan(allowed / 4);
            if (c == LeasedFleetCase.FIXED_WINDOW_ALTERNATING) {
                long limit = 2_000;
                soft.assertThat(o.perWindow.size()).as(what + ": windows the run crossed").isGreaterThan(10);
                soft.assertThat(o.perWindow.values().stream().mapToLong(Long::longValue).sum())
                        .as(what + ": admissions placed in a window with certainty").isGreaterThan(o.admitted / 2);
                for (Map.Entry<Long, Long> w : o.perWindow.entrySet()) {
                    soft.assertThat(w.getValue()).as(what + ": admitted in window " + w.getKey()
                            + " (a lease spent after its window ended would show here)").isLessThanOrEqualTo(limit);
                }
            }
        }
        soft.assertAll();
    }

    @Test
    void aHotKeyNeedsAtLeastTwentyTimesFewerScriptCallsThanDecisions() {
        Outcome o = run(Topology.STANDALONE, LeasedFleetCase.HOT.name(), "hot");
        String what = "HOT leased: " + o.describe(Long.MAX_VALUE);
        System.out.println("leased fleet " + what);
        assertThat(o.errors).as(what).isZero();
        assertThat(o.admitted).as(what + ": a limit no fleet reaches admits every attempt").isEqualTo(o.attempts);
        assertThat(o.evalsha).as(what + ": lease calls were made").isPositive();
        assertThat(o.evalsha * 20).as(what + ": script calls × 20 against decisions").isLessThanOrEqualTo(o.attempts);
    }

    // ------------------------------------------------------------------------------------------------ runs

    /** One run summed over the processes, with the span it took by server time and the script calls Redis ran. */
    private record Outcome(long admitted, long attempts, long errors, long granted, TreeMap<Long, Long> perWindow,
                           long straddling, long from, long to, long evalsha) {
        String describe(long allowed) {
            return "admitted " + admitted + " of " + attempts + " attempts"
                    + (allowed == Long.MAX_VALUE ? "" : ", " + allowed + " allowed")
                    + ", leases granted " + granted + " (under-use: " + (granted - admitted) + " leased, never spent)"
                    + " in " + (to - from) / 1000 + " ms; " + evalsha + " script calls, "
                    + (evalsha == 0 ? "-" : String.format("%.1f", (double) attempts / evalsha)) + " decisions and "
                    + (evalsha == 0 ? "-" : String.format("%.1f", (double) admitted / evalsha))
                    + " admissions per script call" + (perWindow.isEmpty() ? "" : "; " + perWindow.size()
                    + " windows, fullest " + perWindow.values().stream().mapToLong(Long::longValue).max().orElse(0)
                    + ", " + straddling + " admissions straddled a window end");
        }
    }

    private static Outcome run(Topology topology, String caseName, String key) {
        long evalshaBefore = evalshaCalls(topology);
        long from = FleetAccuracyIT.Fleet.serverMicros(topology);
        List<String[]> done = fleet.runInMode(topology, caseName, key, MODE);
        long to = FleetAccuracyIT.Fleet.serverMicros(topology);
        long evalsha = evalshaCalls(topology) - evalshaBefore;
        long admitted = 0;
        long attempts = 0;
        long errors = 0;
        long granted = 0;
        long straddling = 0;
        TreeMap<Long, Long> perWindow = new TreeMap<>();
        for (String[] w : done) {
            // DONE store case key admitted attempts errors granted=G windows=W:i=n,... straddling=S
            admitted += Long.parseLong(w[4]);
            attempts += Long.parseLong(w[5]);
            errors += Long.parseLong(w[6]);
            granted += Long.parseLong(value(w[7], "granted"));
            String windows = value(w[8], "windows");
            String counts = windows.substring(windows.indexOf(':') + 1);
            if (!counts.isEmpty()) {
                for (String pair : counts.split(",")) {
                    int eq = pair.indexOf('=');
                    perWindow.merge(Long.parseLong(pair.substring(0, eq)), Long.parseLong(pair.substring(eq + 1)),
                            Long::sum);
                }
            }
            straddling += Long.parseLong(value(w[9], "straddling"));
        }
        return new Outcome(admitted, attempts, errors, granted, perWindow, straddling, from, to, evalsha);
    }

    private static String value(String word, String name) {
        if (!word.startsWith(name + "=")) {
            throw new AssertionError("expected " + name + "=..., got " + word);
        }
        return word.substring(name.length() + 1);
    }

    /** Script calls (EVALSHA or FCALL) the topology's nodes have run, from {@code INFO commandstats}. */
    private static long evalshaCalls(Topology topology) {
        return topology.scriptCalls();
    }
}
