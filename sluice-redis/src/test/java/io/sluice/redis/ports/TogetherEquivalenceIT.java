package io.sluice.redis.ports;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.Concurrency;
import io.sluice.Decision;
import io.sluice.Limit;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.Store;
import io.sluice.Store.Target;
import io.sluice.redis.RedisStore;
import io.sluice.redis.Topology;
import io.sluice.redis.internal.KeyLayout;
import io.sluice.testkit.EquivalenceRun;
import io.sluice.testkit.EquivalenceScenario;
import io.sluice.testkit.ManualClock;
import io.sluice.testkit.Seeds;
import io.sluice.testkit.redis.SharedRedis;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link Store#decideTogether} decides alike in memory (the Java transitions, locked together) and in Redis (one
 * script call over every target): random rules of every ported algorithm, random groups of targets across those
 * rules and a pool of keys, random requests (try, best effort, reserve, peek) at random times, compared decision
 * by decision, and every target's state compared after each step by a peek on its own.
 *
 * <p>On the cluster every key carries one {tag}, so the targets of a group share a slot; groups of untagged keys
 * that hash to different slots are thrown in too: the Redis store must refuse them with the error that says what
 * to do and charge nothing (the peeks after show it), while the in-memory store is not asked. The opt-in
 * {@link RedisStore#decideTogetherAcrossSlots} is compared with what it documents: each target decided on its
 * own, the decisions combined (allowed only when all are).
 *
 * <p>The seed is fixed per topology ({@link Seeds}; {@code -Dsluice.seed=random} searches). A failure names its
 * seed; replay it with {@code -Dit.test=TogetherEquivalenceIT -Dsluice.seed=<seed>}.
 * (The per-key equivalence of each algorithm is {@link RedisMemoryEquivalenceIT}'s.)
 */
@ExtendWith(SharedRedis.class)
class TogetherEquivalenceIT {

    private static final int SCENARIOS = Integer.getInteger("sluice.scenarios", 6);
    private static final int RULES = 3;
    private static final int KEYS = 4;
    private static final int STEPS = 60;
    private static final int GROUPS_PER_STEP = 6;

    /**
     * Runs that once diverged, replayed on every run: topology, seed, scenarios to run.
     * -3115737644734515926 on the cluster: after the cross-slot fallback at scenario 0, step 4, Redis showed the
     * 1 µs first-request fixed window of s0-r0 uncharged where memory showed it charged. Not the fallback: that
     * state's TTL is its 1 µs plus the 1 s client-time slack, counted by Redis on its own clock, and the test then
     * peeked without catching the manual clock up with the wall time passed (over a second on a loaded machine),
     * so Redis had dropped a state memory, at the old client time, still held. The peeks now catch up first.
     */
    private static final List<Arguments> FOUND = List.of(
            Arguments.of(Topology.CLUSTER, -3115737644734515926L, 1));

    @ParameterizedTest
    @EnumSource(Topology.class)
    void groupsOfTargetsDecideIdentically(Topology topology) throws Exception {
        groups(topology, Seeds.of("TogetherEquivalenceIT on " + topology), SCENARIOS);
    }

    static Stream<Arguments> found() {
        return System.getProperty("sluice.seed") == null ? FOUND.stream() : Stream.empty();
    }

    @ParameterizedTest(name = "{0}, seed {1}")
    @MethodSource("found")
    void groupsFoundDivergingOnceDecideIdentically(Topology topology, long seed, int scenarios) throws Exception {
        groups(topology, seed, scenarios);
    }

    private static void groups(Topology topology, long seed, int scenarios) throws Exception {
        EquivalenceRun run = new EquivalenceRun("on " + topology, seed);
        String prefix = "teq-" + UUID.randomUUID().toString().substring(0, 8);
        // Without cached denials: a group of one target is Store.decide, which may answer a known denial from the
        // cache (source CACHED, the same figures); the cache has its own tests, and the source would differ here.
        try (RedisStore redis = topology.builder().prefix(prefix).clock(run.clock()).timeout(Duration.ofSeconds(10))
                .cacheDenials(false).build()) {
            run.scenarios(scenarios, redis, scenario -> {
                new Scenario(scenario, redis, topology, prefix).run();
                return 0;
            });
        }
    }

    private static final class Scenario {
        private final EquivalenceScenario scenario;
        private final Random r;
        private final ManualClock clock;
        private final Store memory;
        private final RedisStore redis;
        private final Topology topology;
        private final String prefix;
        private final String name;
        private final String context;
        private final List<Rule> rules = new ArrayList<>();
        private final List<String> keys = new ArrayList<>();

        Scenario(EquivalenceScenario scenario, RedisStore redis, Topology topology, String prefix) {
            this.scenario = scenario;
            this.r = scenario.random();
            this.clock = scenario.clock();
            this.memory = scenario.reference();
            this.redis = redis;
            this.topology = topology;
            this.prefix = prefix;
            this.name = scenario.name();
            this.context = scenario.context();
        }

        void run() {
            List<String> algorithms = new ArrayList<>(RedisMemoryEquivalenceIT.PORTED.keySet());
            for (int i = 0; i < RULES; i++) {
                int n = 1 + r.nextInt(2);
                List<Limit> limits = new ArrayList<>();
                for (int j = 0; j < n; j++) {
                    String a = algorithms.get(r.nextInt(algorithms.size()));
                    if (j > 0 && a.equals("concurrency") && limits.stream().anyMatch(l -> l instanceof Concurrency)) {
                        continue; // a rule holds at most one concurrency limit
                    }
                    limits.add(RedisMemoryEquivalenceIT.PORTED.get(a).apply(r).named("l" + j));
                }
                rules.add(Rule.of(name + "-r" + i, limits));
            }
            // One tag for the scenario's keys: on the cluster, every group of them is in one slot.
            for (int k = 0; k < KEYS; k++) {
                keys.add("{" + name + "}k" + k);
            }
            clock.setMicros(new ManualClock().nowMicros() + r.nextInt(1_000_000));
            for (int step = 0; step < STEPS; step++) {
                advance();
                scenario.keepUpWithTheWallClock();
                for (int g = 0; g < GROUPS_PER_STEP; g++) {
                    List<Target> group = group();
                    Request request = request(group);
                    scenario.keepUpWithTheWallClock();
                    String where = scenario.where(step) + ", " + describe(group) + ", " + request;
                    Decision expected = memory.decideTogether(group, request);
                    assertThat(redis.decideTogether(group, request)).as(where).isEqualTo(expected);
                }
                if (topology == Topology.CLUSTER && r.nextInt(4) == 0) {
                    acrossSlots(step);
                }
                comparePeeks(step);
            }
        }

        /** One to three distinct (rule, key) targets. */
        private List<Target> group() {
            int n = 1 + r.nextInt(3);
            List<Target> group = new ArrayList<>();
            while (group.size() < n) {
                Target t = new Target(rules.get(r.nextInt(rules.size())), keys.get(r.nextInt(keys.size())));
                if (!group.contains(t)) {
                    group.add(t);
                }
            }
            return group;
        }

        private Request request(List<Target> group) {
            long max = Limit.MAX_COUNT;
            for (Target t : group) {
                max = Math.min(max, t.rule().maxPermits());
            }
            long permits = Math.min(max, 1 + (r.nextInt(4) == 0 ? (long) (r.nextDouble() * max) : r.nextInt(4)));
            return switch (r.nextInt(5)) {
                case 0 -> Request.tryAcquireAtMost(permits + r.nextInt(3));
                case 1 -> Request.reserve(permits, r.nextBoolean() ? Long.MAX_VALUE : r.nextInt(3) * 1_000_000L);
                case 2 -> Request.peek(r.nextBoolean() ? 0 : permits);
                default -> Request.tryAcquire(permits);
            };
        }

        /**
         * Untagged keys of two rules in different slots: decideTogether refuses them and charges nothing; the
         * opt-in fallback decides each target on its own, as memory does one by one.
         */
        private void acrossSlots(int step) {
            Rule a = rules.get(0);
            Rule b = rules.get(1);
            String keyA = name + "-x" + step;
            String keyB;
            int i = 0;
            do {
                keyB = name + "-y" + step + "-" + i++;
            } while (KeyLayout.slot(prefix + ":{" + a.name() + ":" + keyA + "}")
                    == KeyLayout.slot(prefix + ":{" + b.name() + ":" + keyB + "}"));
            List<Target> group = List.of(new Target(a, keyA), new Target(b, keyB));
            Request request = Request.tryAcquire(1);
            scenario.keepUpWithTheWallClock();
            assertThatThrownBy(() -> redis.decideTogether(group, request)).as(context + ", step " + step)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("different Redis Cluster slots")
                    .hasMessageContaining("decideTogetherAcrossSlots");
            for (Target t : group) {
                assertThat(redis.decide(t.rule(), t.key(), Request.peek(0)))
                        .as(context + ", step " + step + ": the refused group charged " + t.key())
                        .isEqualTo(memory.decide(t.rule(), t.key(), Request.peek(0)));
            }
            Decision fallback = redis.decideTogetherAcrossSlots(group, request);
            boolean allAllowed = true;
            for (Target t : group) {
                allAllowed &= memory.decide(t.rule(), t.key(), request).allowed();
            }
            assertThat(fallback.allowed()).as(context + ", step " + step + ": the fallback").isEqualTo(allAllowed);
            for (Target t : group) {
                scenario.keepUpWithTheWallClock();
                assertThat(redis.decide(t.rule(), t.key(), Request.peek(0)))
                        .as(context + ", step " + step + ": after the fallback, the state of " + t.key())
                        .isEqualTo(memory.decide(t.rule(), t.key(), Request.peek(0)));
            }
        }

        /** Every (rule, key) on its own: the groups charged each target alike in both stores. */
        private void comparePeeks(int step) {
            for (Rule rule : rules) {
                for (String key : keys) {
                    scenario.keepUpWithTheWallClock();
                    Decision expected = memory.decide(rule, key, Request.peek(0));
                    assertThat(redis.decide(rule, key, Request.peek(0)))
                            .as(context + ", step " + step + ", peek of " + rule.name() + "/" + key + ": " + rule)
                            .isEqualTo(expected);
                }
            }
        }

        private static String describe(List<Target> group) {
            List<String> out = new ArrayList<>();
            for (Target t : group) {
                out.add(t.rule() + "/" + t.key());
            }
            return "targets " + out;
        }

        /** Same-microsecond bursts, small and large steps, steps back. */
        private void advance() {
            long delta = switch (r.nextInt(6)) {
                case 0, 1 -> 0;
                case 2 -> r.nextInt(1_500) * 1_000L;
                case 3 -> -r.nextInt(2_000);
                case 4 -> r.nextInt(120) * 1_000_000L;
                default -> r.nextInt(1_000_000);
            };
            scenario.stepClock(delta);
        }
    }
}
