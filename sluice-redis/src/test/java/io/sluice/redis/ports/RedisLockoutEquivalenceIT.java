package io.sluice.redis.ports;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Concurrency;
import io.sluice.Decision;
import io.sluice.Limit;
import io.sluice.Lockout;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.Store;
import io.sluice.internal.algorithm.Arith;
import io.sluice.redis.RedisStore;
import io.sluice.redis.Topology;
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
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@code lockout.lua} decides exactly as {@code LockoutEvaluator}: random rules with a random lockout (limits of
 * every ported algorithm from {@link RedisMemoryEquivalenceIT#PORTED}, shadow limits now and then), and random
 * sequences of tries, best-effort requests, reservations, peeks, releases and resets at random times (same
 * instants, small and large steps, small steps back), on the in-memory store and on Redis with one manual
 * clock, must give equal decisions step by step, lockouts included. Now and then the rule is reloaded as
 * another version of itself: without its lockout, with another lockout, or back to the first (a count of other
 * parameters is no count; a key decided without the lockout forgets it). Each scenario runs {@link #KEYS} keys side by
 * side, one pipelined batch per step.
 *
 * <p>The seed is fixed per topology ({@link Seeds}; {@code -Dsluice.seed=random} searches); a failure names
 * it: replay with {@code -Dit.test=RedisLockoutEquivalenceIT -Dsluice.seed=<seed>}.
 */
@ExtendWith(SharedRedis.class)
class RedisLockoutEquivalenceIT {

    private static final int KEYS = 24;
    private static final int STEPS = 60;
    /** Lockout periods and durations: from one microsecond to a day. */
    private static final long[] PERIODS_MICROS = {1, 7, 1_000, 250_000, 1_000_000, 60_000_000, 86_400_000_000L};

    @ParameterizedTest
    @EnumSource(Topology.class)
    void randomSequencesWithLockoutsDecideIdentically(Topology topology) throws Exception {
        long seed = Seeds.of("RedisLockoutEquivalenceIT on " + topology);
        EquivalenceRun run = new EquivalenceRun(topology.toString(), seed);
        String prefix = "lq-" + UUID.randomUUID().toString().substring(0, 8);
        int scenarios = topology == Topology.STANDALONE ? 16 : 4;
        long lockedOut;
        try (RedisStore redis = topology.builder().prefix(prefix).clock(run.clock()).timeout(Duration.ofSeconds(10))
                .build()) {
            lockedOut = run.scenarios(scenarios, redis, scenario -> new Scenario(scenario, redis).run());
        }
        assertThat(lockedOut).as("lockout decisions compared, seed " + seed).isPositive();
    }

    /**
     * With Redis server time (no client clock) the lockout's times are the server's: the key is locked out, its
     * state key sits in the limits' slot with a TTL no longer than the lockout, and reset lifts it.
     */
    @ParameterizedTest
    @EnumSource(Topology.class)
    void withServerTimeTheLockoutIsTheServersAndResetLiftsIt(Topology topology) {
        String prefix = "ls-" + UUID.randomUUID().toString().substring(0, 8);
        Rule login = Rule.of("login", io.sluice.FixedWindow.of(2, Duration.ofHours(1)))
                .withLockout(Lockout.of(2, Duration.ofMinutes(15), Duration.ofHours(1)));
        try (RedisStore redis = topology.builder().prefix(prefix).timeout(Duration.ofSeconds(10)).build()) {
            for (int i = 0; i < 2; i++) {
                assertThat(redis.decide(login, "user:42", Request.tryAcquire(1)).allowed()).isTrue();
            }
            assertThat(redis.decide(login, "user:42", Request.tryAcquire(1)).lockedOut()).isFalse();
            Decision locked = redis.decide(login, "user:42", Request.tryAcquire(1));
            assertThat(locked.lockedOut()).isTrue();
            assertThat(locked.limit()).isEqualTo(Lockout.NAME);
            assertThat(locked.retryAfterMicros()).isEqualTo(3_600_000_000L);
            Decision again = redis.decide(login, "user:42", Request.tryAcquire(1));
            assertThat(again.lockedOut()).isTrue();
            assertThat(again.retryAfterMicros()).isBetween(1L, 3_600_000_000L);
            String lockKey = prefix + ":{login:user:42}:%lockout";
            // "count since ends after within": the count cleared when the lockout began, under 2 within 15 minutes
            assertThat(topology.call(lockKey, "GET", lockKey)).asString().matches("0 [0-9]+ [0-9]+ 2 900000000");
            assertThat((Long) topology.call(lockKey, "PTTL", lockKey)).isBetween(1L, 3_600_000L);
            redis.reset(login, "user:42");
            assertThat(topology.keys(lockKey)).isEmpty();
            assertThat(topology.keys(prefix + ":{login:user:42}:fixed_window")).isEmpty();
            assertThat(redis.decide(login, "user:42", Request.tryAcquire(1)).allowed()).isTrue();
        }
    }

    private static final class Scenario {
        private final EquivalenceScenario scenario;
        private final Random r;
        private final RedisStore redis;
        /** The rule's versions a reload switches between: its lockout, none, and another lockout. */
        private final List<Rule> versions;
        private Rule rule;

        Scenario(EquivalenceScenario scenario, RedisStore redis) {
            this.scenario = scenario;
            this.r = scenario.random();
            this.redis = redis;
            this.rule = randomRule(scenario.name());
            this.versions = List.of(rule, rule.withLockout(null), rule.withLockout(randomLockout()));
        }

        private Lockout randomLockout() {
            return Lockout.of(1 + r.nextInt(4), Duration.ofNanos(pick(PERIODS_MICROS) * 1_000),
                    Duration.ofNanos(pick(PERIODS_MICROS) * 1_000));
        }

        private Rule randomRule(String name) {
            List<String> algorithms = new ArrayList<>(RedisMemoryEquivalenceIT.PORTED.keySet());
            List<Limit> limits = new ArrayList<>();
            for (int i = 0, n = 1 + r.nextInt(2); i < n; i++) {
                String a = algorithms.get(r.nextInt(algorithms.size()));
                if (a.equals("concurrency") && limits.stream().anyMatch(l -> l instanceof Concurrency)) {
                    continue;
                }
                limits.add(RedisMemoryEquivalenceIT.PORTED.get(a).apply(r).named("l" + i));
            }
            Rule rule = Rule.of(name, limits);
            if (limits.size() > 1 && r.nextInt(4) == 0 && !(limits.get(1) instanceof Concurrency)) {
                rule = rule.withShadow(limits.get(1).name());
            }
            return rule.withLockout(randomLockout());
        }

        /** Runs the scenario; returns how many of its decisions were lockouts. */
        long run() {
            // Now and then near the end of the clock (a lockout's end is capped at 2^53), with the algorithms whose
            // ports are settled there (RedisMemoryEquivalenceIT probes the others).
            boolean nearEnd = r.nextInt(6) == 0 && rule.limits().stream().allMatch(l -> List.of("fixed_window",
                    "gcra", "sliding_window", "token_bucket").contains(l.algorithm()));
            scenario.clock().setMicros(nearEnd ? Arith.MAX_TIME - r.nextInt(100_000_000)
                    : new ManualClock().nowMicros() + r.nextInt(1_000_000));
            scenario.keys(KEYS);
            long lockedOut = 0;
            for (int step = 0; step < STEPS; step++) {
                advance();
                if (r.nextInt(12) == 0) {
                    rule = versions.get(r.nextInt(versions.size()));
                }
                EquivalenceScenario.Batch batch = scenario.operateOnKeys(rule, step, this::randomRequest);
                for (Decision expected : scenario.decideAndCompare(rule, batch, step, "", RedisMemoryEquivalenceIT.pipelined(redis))) {
                    lockedOut += expected.lockedOut() ? 1 : 0;
                }
            }
            return lockedOut;
        }

        /** Mostly tries, so that keys get rejected and locked out. */
        private Request randomRequest() {
            long max = Math.min(rule.maxPermits(), Limit.MAX_COUNT);
            long permits = Math.min(max, 1 + r.nextInt(3));
            return switch (r.nextInt(8)) {
                case 0 -> Request.tryAcquireAtMost(permits);
                case 1 -> Request.peek(r.nextBoolean() ? 0 : permits);
                case 2 -> Request.reserve(permits, r.nextBoolean() ? 0 : r.nextInt(3) * 1_000_000L);
                default -> Request.tryAcquire(permits);
            };
        }

        private long pick(long[] values) {
            return values[r.nextInt(values.length)];
        }

        /** Same-microsecond bursts, small and large steps, small steps back; within [0, MAX_TIME]. */
        private void advance() {
            long delta = switch (r.nextInt(7)) {
                case 0, 1 -> 0;
                case 2 -> r.nextInt(10);
                case 3 -> r.nextInt(1_500) * 1_000L;
                case 4 -> -r.nextInt(2_000);
                case 5 -> r.nextInt(120) * 1_000_000L;
                default -> r.nextInt(1_000_000);
            };
            scenario.stepClock(delta);
        }
    }
}
