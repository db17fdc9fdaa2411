package io.sluice.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Decision;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.Store;
import io.sluice.internal.algorithm.Arith;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.IntFunction;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * One scenario of an {@link EquivalenceRun}: the tools its steps share. The clock steps ({@link #stepClock},
 * {@link #keepUpWithTheWallClock}), the random operations on a set of keys ({@link #operateOnKeys}), the
 * per-step comparison of a batch of decisions ({@link #decideAndCompare}), and each key's history of events,
 * which a failure message shows with the run's seed, the scenario and the step ({@link #where}).
 *
 * <p>Keys are {@code k0}, {@code k1}...; a test that tracks them calls {@link #keys} first. Not thread-safe.
 */
public final class EquivalenceScenario {

    /** Events of the failing key shown in a failure message. */
    private static final int HISTORY = 30;

    /** The tested store's decisions of one batch, in order: {@code requests.get(i)} on {@code keys.get(i)}. */
    @FunctionalInterface
    public interface BatchDecider {
        List<Decision> decideAll(Rule rule, List<String> keys, List<Request> requests);
    }

    /** The keys a step decides and their requests, in order (those reset or released are not in it). */
    public record Batch(List<String> keys, List<Request> requests) {}

    /** One event in a key's history: at {@code t}, a request (or other operation) and its outcome. */
    private record Event(long t, Object what, Object outcome) {
        @Override
        public String toString() {
            return "t=" + t + " " + what + (outcome == null ? "" : " -> " + outcome);
        }
    }

    private final Random random;
    private final ManualClock clock;
    private final Store reference;
    private final Store tested;
    private final String name;
    private final String context;
    private final List<List<Event>> histories = new ArrayList<>();
    private IntFunction<String> keyDetail = key -> "";
    private long wallSynced = System.nanoTime();

    EquivalenceScenario(Random random, ManualClock clock, Store reference, Store tested, String name,
                        String context) {
        this.random = random;
        this.clock = clock;
        this.reference = reference;
        this.tested = tested;
        this.name = name;
        this.context = context;
    }

    /** The run's one random source: every draw of every scenario comes from it, in order. */
    public Random random() {
        return random;
    }

    public ManualClock clock() {
        return clock;
    }

    /** The in-memory store, fresh for this scenario: its decisions are the expected ones. */
    public Store reference() {
        return reference;
    }

    public Store tested() {
        return tested;
    }

    /** {@code s<n>}: unique within the run, for rule names. */
    public String name() {
        return name;
    }

    /** {@code <label>, seed <seed>, scenario <n>}: the start of every failure message. */
    public String context() {
        return context;
    }

    /** Tracks the history of keys {@code k0} to {@code k<n-1>} for failure messages. */
    public void keys(int n) {
        for (int k = 0; k < n; k++) {
            histories.add(new ArrayList<>());
        }
    }

    /** Adds what a failure message shows about key {@code k<n>} after its history (e.g. its Redis keys). */
    public void describeKeysWith(IntFunction<String> detail) {
        this.keyDetail = detail;
    }

    /** Records an event of one key for failure messages (formatted only then: most runs never fail). */
    public void note(int key, Object what, Object outcome) {
        histories.get(key).add(new Event(clock.nowMicros(), what, outcome));
    }

    /** Moves the clock by {@code deltaMicros} (negative: a clock stepping back), kept within [0, 2^53]. */
    public void stepClock(long deltaMicros) {
        clock.setMicros(Math.max(0, Math.min(Arith.MAX_TIME, clock.nowMicros() + deltaMicros)));
    }

    /**
     * Redis counts a client-time state's TTL on its own clock (the remaining time plus 1 s of slack), so a slow
     * scenario (a loaded machine) would let a state vanish in Redis that the manual clock, barely moving, still
     * holds in memory. So whenever a quarter of a second of wall time has passed since the last catch-up, it is
     * added to the manual clock (noted in the keys' histories): the client clock then never lags the server's by
     * more than that (plus its steps back). A replay by seed may then differ.
     */
    public void keepUpWithTheWallClock() {
        long wallNow = System.nanoTime();
        long behind = (wallNow - wallSynced) / 1_000;
        if (behind > 250_000) {
            wallSynced = wallNow;
            clock.setMicros(Math.min(Arith.MAX_TIME, clock.nowMicros() + behind));
            for (int k = 0; k < histories.size(); k++) {
                note(k, "wall clock catch-up +" + behind + " µs", null);
            }
        }
    }

    /**
     * One step's operations on every tracked key: one in 40 is reset in both stores, one in 40 returns a random
     * lease (0 to 2) in both, compared at once; the others get {@code request} and make up the batch to decide.
     */
    public Batch operateOnKeys(Rule rule, int step, Supplier<Request> request) {
        List<String> keys = new ArrayList<>();
        List<Request> requests = new ArrayList<>();
        for (int k = 0; k < histories.size(); k++) {
            String key = "k" + k;
            int what = random.nextInt(40);
            if (what == 0) {
                reference.reset(rule, key);
                tested.reset(rule, key);
                note(k, "reset", null);
            } else if (what == 1) {
                long lease = random.nextInt(3);
                boolean released = reference.release(rule, key, lease);
                note(k, "release " + lease, released);
                int index = k;
                assertThat(tested.release(rule, key, lease)).as(() -> where(rule, index, step)).isEqualTo(released);
            } else {
                keys.add(key);
                requests.add(request.get());
            }
        }
        return new Batch(keys, requests);
    }

    /**
     * Decides {@code batch} in the tested store (all of it first, as {@code decider} sends it), then each request
     * in the reference store, and asserts they are equal one by one; answers the reference's decisions.
     * {@code what} follows the step in a failure message (e.g. {@code " (peek after)"}).
     */
    public List<Decision> decideAndCompare(Rule rule, Batch batch, int step, String what, BatchDecider decider) {
        keepUpWithTheWallClock();
        List<Decision> actual = decider.decideAll(rule, batch.keys(), batch.requests());
        List<Decision> expected = new ArrayList<>();
        for (int i = 0; i < batch.keys().size(); i++) {
            int k = Integer.parseInt(batch.keys().get(i).substring(1));
            Decision e = reference.decide(rule, batch.keys().get(i), batch.requests().get(i));
            note(k, batch.requests().get(i), e);
            expected.add(e);
            assertThat(actual.get(i)).as(() -> where(rule, k, step) + what).isEqualTo(e);
        }
        return expected;
    }

    /** {@code <context>, step <step>, t=<now>}: where a failure happened. */
    public String where(int step) {
        return context + ", step " + step + ", t=" + clock.nowMicros();
    }

    /** Where a failure of key {@code k<key>} happened, with the rule, the key's last events and its detail. */
    public String where(Rule rule, int key, int step) {
        List<Event> history = histories.get(key);
        return context + ", step " + step + ", key k" + key + ", t=" + clock.nowMicros() + ", rule " + rule
                + "\nlast events of the key:"
                + history.subList(Math.max(0, history.size() - HISTORY), history.size()).stream()
                        .map(e -> "\n  " + e).collect(Collectors.joining())
                + keyDetail.apply(key);
    }
}
