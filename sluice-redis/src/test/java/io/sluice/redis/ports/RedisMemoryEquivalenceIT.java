package io.sluice.redis.ports;

import io.sluice.redis.Topology;
import io.sluice.redis.RedisStore;
import io.sluice.redis.BatchRequest;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Decision;
import io.sluice.Concurrency;
import io.sluice.RollingWindow;
import io.sluice.SlidingWindow;
import io.sluice.SlidingLog;
import io.sluice.FixedWindow;
import io.sluice.Gcra;
import io.sluice.LeakyBucket;
import io.sluice.Limit;
import io.sluice.Request;
import io.sluice.RefreshPeriod;
import io.sluice.SmoothBursty;
import io.sluice.SmoothWarmingUp;
import io.sluice.Rule;
import io.sluice.Store;
import io.sluice.TokenBucket;
import io.sluice.internal.algorithm.Arith;
import io.sluice.testkit.EquivalenceRun;
import io.sluice.testkit.EquivalenceScenario;
import io.sluice.testkit.ManualClock;
import io.sluice.testkit.Seeds;
import io.sluice.testkit.redis.SharedRedis;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The Lua ports decide exactly as the Java transitions: random rules and request sequences, replayed on the
 * in-memory store and on Redis with the same manual clock, must give equal decisions step by step. Each port
 * adds a generator of its limits to {@link #PORTED}.
 *
 * <p>One sequence is one key: a random series of operations (try, best-effort, reserve, peek, reset, release)
 * at random times, under a rule whose parameters change now and then. For speed, each scenario runs
 * {@link #KEYS} independent sequences side by side, one pipelined batch per step, so every algorithm gets
 * the number of scenarios × {@link #KEYS} sequences per topology (the first limit of each rule is of the algorithm
 * under test, the others of any ported one).
 *
 * <p>The suite runs a fixed seed per algorithm and topology, so a run of {@code ./run-tests} is reproducible: a
 * build passes or fails on its code, never on the luck of a draw. 24 scenarios on a standalone server, 8 on the
 * cluster, where the scripts are the same and what the cluster adds (every key of a decision in one slot,
 * routing) shows in the first scenario. A search for new sequences is a separate, deliberate run:
 * {@code -Dsluice.seed=random -Dsluice.scenarios=200} (a new seed per algorithm, printed on failure); a
 * sequence such a search finds goes into {@link #FOUND} once fixed, so it is replayed on every run.
 *
 * <p>A failure names its seed and shows the key's last events and Redis keys; replay it with
 * {@code -Dit.test=RedisMemoryEquivalenceIT -Dsluice.algorithm=<name> -Dsluice.seed=<seed>}.
 *
 * <p>The algorithms and topologies run in parallel (two threads, src/test/resources/junit-platform.properties;
 * the class itself, as every class, runs alone):
 * each has its own seed, clock, memory store and key prefix on the shared servers, so they share nothing, and
 * one thread decides in the JVM while the other's batch runs in Redis.
 */
@ExtendWith(SharedRedis.class)
public class RedisMemoryEquivalenceIT {

    /** Scenarios per run on each topology; see the class comment. */
    private static int scenarios(Topology topology) {
        Integer asked = Integer.getInteger("sluice.scenarios");
        return asked != null ? asked : topology == Topology.STANDALONE ? 24 : 8;
    }
    /**
     * Sequences a random search found diverging, replayed on every run: algorithm, seed, scenarios to run.
     * leaky_bucket 3205938679116892609: a smooth_bursty state written at the end of the clock (2^53 µs) already
     * expired, kept by the memory store and deleted by the script, then a clock stepping back 579 µs.
     */
    private static final List<Arguments> FOUND = List.of(
            Arguments.of("leaky_bucket", 3205938679116892609L, 4));
    private static final int KEYS = 40;
    private static final int STEPS = 40;

    /** A random limit of each ported algorithm (named by the caller), by algorithm name (CoalescedModeIT too). */
    public static final Map<String, Function<Random, Limit>> PORTED = new LinkedHashMap<>();

    static {
        PORTED.put("fixed_window", RedisMemoryEquivalenceIT::fixedWindow);
        PORTED.put("sliding_log", RedisMemoryEquivalenceIT::slidingLog);
        PORTED.put("sliding_window", RedisMemoryEquivalenceIT::slidingWindow);
        PORTED.put("rolling_window", RedisMemoryEquivalenceIT::rollingWindow);
        PORTED.put("concurrency", RedisMemoryEquivalenceIT::concurrency);
        PORTED.put("token_bucket", RedisMemoryEquivalenceIT::tokenBucket);
        PORTED.put("gcra", RedisMemoryEquivalenceIT::gcra);
        PORTED.put("leaky_bucket", RedisMemoryEquivalenceIT::leakyBucket);
        PORTED.put("smooth_bursty", RedisMemoryEquivalenceIT::smoothBursty);
        PORTED.put("smooth_warming_up", RedisMemoryEquivalenceIT::smoothWarmingUp);
        PORTED.put("refresh_period", RedisMemoryEquivalenceIT::refreshPeriod);
        PORTED.put("calendar_window", RedisMemoryEquivalenceIT::calendarWindow);
    }

    private static final long[] WINDOWS_MICROS = {1, 7, 1_000, 250_000, 1_000_000, 60_000_000,
            31_622_400_000_000L};

    /** Periods from 1 µs to the longest a limit accepts (366 days). */
    private static final long[] PERIODS_MICROS = {1, 7, 1_000, 250_000, 1_000_000, 3_000_000, 60_000_000,
            86_400_000_000L, 31_622_400_000_000L};

    private static Limit fixedWindow(Random r) {
        long limit = r.nextInt(4) == 0 ? Limit.MAX_COUNT - r.nextInt(3) : 1 + r.nextInt(8);
        return new FixedWindow("fixed_window", limit, micros(pick(r, WINDOWS_MICROS)),
                r.nextBoolean() ? FixedWindow.Align.EPOCH : FixedWindow.Align.FIRST_REQUEST, r.nextBoolean());
    }

    private static final java.util.List<java.time.ZoneId> CALENDAR_ZONES = java.util.List.of(
            java.time.ZoneId.of("Europe/Berlin"), java.time.ZoneId.of("America/New_York"),
            java.time.ZoneId.of("Australia/Lord_Howe"), java.time.ZoneId.of("Asia/Kolkata"));

    private static Limit calendarWindow(Random r) {
        long limit = r.nextInt(4) == 0 ? Limit.MAX_COUNT - r.nextInt(3) : 1 + r.nextInt(8);
        io.sluice.CalendarWindow.Period[] periods = io.sluice.CalendarWindow.Period.values();
        return new io.sluice.CalendarWindow("calendar_window", limit, periods[r.nextInt(periods.length)],
                CALENDAR_ZONES.get(r.nextInt(CALENDAR_ZONES.size())),
                java.time.DayOfWeek.values()[r.nextInt(7)]);
    }

    private static Limit tokenBucket(Random r) {
        while (true) {
            long capacity = r.nextInt(4) == 0 ? Limit.MAX_COUNT - r.nextInt(3) : 1 + r.nextInt(10);
            long refillTokens = switch (r.nextInt(4)) {
                case 0 -> 1 + r.nextLong(Limit.MAX_COUNT);
                case 1 -> Limit.MAX_COUNT;
                default -> 1 + r.nextInt(7);
            };
            long initial = r.nextBoolean() ? capacity : r.nextLong(capacity + 1);
            TokenBucket.Refill refill = TokenBucket.Refill.values()[r.nextInt(TokenBucket.Refill.values().length)];
            try {
                return new TokenBucket("token_bucket", capacity, refillTokens, micros(pick(r, PERIODS_MICROS)), refill,
                        initial);
            } catch (IllegalArgumentException e) {
                // the reduced rate a/b has a·b > 2^53: draw again
            }
        }
    }

    private static Limit gcra(Random r) {
        while (true) {
            long period = pick(r, PERIODS_MICROS);
            long limit = 1 + (r.nextBoolean() ? r.nextInt(10) : r.nextLong(Math.min(period, Limit.MAX_COUNT)));
            long burst = switch (r.nextInt(4)) {
                case 0 -> limit;
                case 1 -> Limit.MAX_COUNT - r.nextInt(3);
                case 2 -> (1L << 53) / ((period + limit - 1) / limit) - r.nextInt(2);
                default -> 1 + r.nextInt(10);
            };
            try {
                return new Gcra("gcra", limit, micros(period), burst);
            } catch (IllegalArgumentException e) {
                // limit above one per microsecond, or burst·T > 2^53: draw again
            }
        }
    }

    private static Limit leakyBucket(Random r) {
        long limit = r.nextInt(4) == 0 ? 1_000_000_000L - r.nextInt(3) : 1 + r.nextInt(10);
        long burst = switch (r.nextInt(4)) {
            case 0 -> 0;
            case 1 -> 1_000_000_000L - r.nextInt(3);
            default -> 1 + r.nextInt(8);
        };
        boolean nodelay = r.nextInt(3) == 0;
        long delay = nodelay || burst == 0 ? 0 : r.nextLong(burst + 1);
        return new LeakyBucket("leaky_bucket", limit, micros(pick(r, PERIODS_MICROS)), burst, nodelay, delay);
    }

    private static Duration micros(long micros) {
        return Duration.ofNanos(1_000 * micros);
    }

    /** Rates with awkward binary expansions, the extremes, and Guava's test values. */
    private static final double[] RATES = {1.0 / 31_622_400, 1.0 / 3, 0.5, 1.0, 2.0, 3.0, 5.0, 7.3, 0.1, 100.0,
            1_000_000.0};

    private static double rate(Random r) {
        return r.nextInt(4) == 0 ? 0.05 + 20 * r.nextDouble() : RATES[r.nextInt(RATES.length)];
    }

    private static Limit smoothBursty(Random r) {
        double[] bursts = {0.0, 1.0, 1.0 / 3, 0.25, 2.7, 60.0, 31_622_400.0, 5 * r.nextDouble()};
        return new SmoothBursty("smooth_bursty", rate(r), bursts[r.nextInt(bursts.length)]);
    }

    private static Limit smoothWarmingUp(Random r) {
        long[] warmups = {1, 7, 1_000, 250_000, 1_000_000, 4_000_000, 60_000_000, 31_622_400_000_000L,
                1 + r.nextInt(10_000_000)};
        double[] coldFactors = {1.0, 3.0, 2.5, 1000.0, 1 + 9 * r.nextDouble()};
        return new SmoothWarmingUp("smooth_warming_up", rate(r), Duration.ofNanos(1_000 * pick(r, warmups)),
                coldFactors[r.nextInt(coldFactors.length)]);
    }

    private static Limit refreshPeriod(Random r) {
        long limit = switch (r.nextInt(4)) {
            case 0 -> Limit.MAX_COUNT - r.nextInt(3);
            case 1 -> 1 + r.nextInt(1_000);
            default -> 1 + r.nextInt(8);
        };
        long[] timeouts = {0, 5_000_000, 1 + r.nextInt(3_000_000)};
        return new RefreshPeriod("refresh_period", limit, Duration.ofNanos(1_000 * pick(r, WINDOWS_MICROS)),
                Duration.ofNanos(1_000 * pick(r, timeouts)));
    }

    private static Limit slidingLog(Random r) {
        long limit = r.nextInt(5) == 0 ? SlidingLog.MAX_LOG - r.nextInt(3) : 1 + r.nextInt(8);
        long window = pick(r, WINDOWS_MICROS);
        long minGap = switch (r.nextInt(4)) {
            case 0, 1 -> 0;
            case 2 -> window / (1 + r.nextInt(10));
            default -> (long) (r.nextDouble() * (window + 1));
        };
        return new SlidingLog("sliding_log", limit, micros(window), micros(minGap), r.nextBoolean());
    }

    private static Limit slidingWindow(Random r) {
        long limit = r.nextInt(4) == 0 ? Limit.MAX_COUNT - r.nextInt(3) : 1 + r.nextInt(8);
        return new SlidingWindow("sliding_window", limit, micros(pick(r, WINDOWS_MICROS)));
    }

    private static Limit rollingWindow(Random r) {
        long limit = r.nextInt(4) == 0 ? Limit.MAX_COUNT - r.nextInt(3) : 1 + r.nextInt(8);
        long window = pick(r, WINDOWS_MICROS);
        long buckets = pick(r, new long[] {1, 2, 3, 10, 60, RollingWindow.MAX_BUCKETS});
        return new RollingWindow("rolling_window", limit, micros(window), micros((window + buckets - 1) / buckets));
    }

    private static Limit concurrency(Random r) {
        long max = r.nextInt(5) == 0 ? Concurrency.MAX_LEASES - r.nextInt(3) : 1 + r.nextInt(8);
        return new Concurrency("concurrency", max, micros(pick(r, WINDOWS_MICROS)));
    }

    private static long pick(Random r, long[] values) {
        return values[r.nextInt(values.length)];
    }

    static Stream<Arguments> portsOnTopologies() {
        // -Dsluice.algorithm=<name> runs one algorithm only (with -Dsluice.seed to replay a failure).
        String only = System.getProperty("sluice.algorithm");
        return PORTED.keySet().stream().filter(a -> only == null || only.equals(a))
                .flatMap(algorithm -> Stream.of(Topology.values()).map(t -> Arguments.of(algorithm, t)));
    }

    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("portsOnTopologies")
    @Execution(ExecutionMode.CONCURRENT)
    void randomSequencesDecideIdentically(String algorithm, Topology topology) throws Exception {
        sequences(algorithm, topology, seed(algorithm, topology), scenarios(topology));
    }

    static Stream<Arguments> found() {
        return System.getProperty("sluice.algorithm") == null ? FOUND.stream() : Stream.empty();
    }

    @ParameterizedTest(name = "{0}, seed {1}")
    @MethodSource("found")
    @Execution(ExecutionMode.CONCURRENT)
    void sequencesFoundDivergingOnceDecideIdentically(String algorithm, long seed, int scenarios) throws Exception {
        sequences(algorithm, Topology.STANDALONE, seed, scenarios);
    }

    /** The run's seed: fixed per algorithm and topology unless {@code -Dsluice.seed} says otherwise (Seeds). */
    private static long seed(String algorithm, Topology topology) {
        return Seeds.of(algorithm + " on " + topology);
    }

    private static void sequences(String algorithm, Topology topology, long seed, int scenarios) throws Exception {
        EquivalenceRun run = new EquivalenceRun(algorithm + " on " + topology, seed);
        String prefix = "eq-" + UUID.randomUUID().toString().substring(0, 8);
        // A generous timeout: a loaded machine must not turn a slow answer into a failure.
        try (RedisStore redis = topology.builder().prefix(prefix).clock(run.clock()).timeout(Duration.ofSeconds(10))
                .build()) {
            run.scenarios(scenarios, redis, scenario -> {
                new Scenario(scenario, redis, topology, prefix).run(algorithm);
                return 0;
            });
        }
    }

    /** Decides a step's requests in Redis in one pipelined batch (RedisLockoutEquivalenceIT too). */
    static EquivalenceScenario.BatchDecider pipelined(RedisStore redis) {
        return (rule, keys, requests) -> {
            List<BatchRequest> batch = new ArrayList<>();
            for (int i = 0; i < keys.size(); i++) {
                batch.add(BatchRequest.of(rule, keys.get(i), requests.get(i)));
            }
            return redis.decideAll(batch);
        };
    }

    /** KEYS independent sequences under one rule on one clock. */
    private static final class Scenario {
        private final EquivalenceScenario scenario;
        private final Random r;
        private final RedisStore redis;
        private final Topology topology;
        private final String prefix;
        private Rule rule;

        Scenario(EquivalenceScenario scenario, RedisStore redis, Topology topology, String prefix) {
            this.scenario = scenario;
            this.r = scenario.random();
            this.redis = redis;
            this.topology = topology;
            this.prefix = prefix;
        }

        void run(String algorithm) {
            rule = randomShadow(Rule.of(scenario.name(), randomLimits(algorithm)));
            scenario.clock().setMicros(startTime());
            scenario.keys(KEYS);
            scenario.describeKeysWith(k -> "\nits Redis keys now:" + redisKeys("k" + k));
            for (int step = 0; step < STEPS; step++) {
                advance();
                if (r.nextInt(20) == 0) {
                    updateLimit();
                }
                EquivalenceScenario.Batch batch = scenario.operateOnKeys(rule, step, this::randomRequest);
                scenario.decideAndCompare(rule, batch, step, "", pipelined(redis));
                List<Request> peeks = new ArrayList<>();
                batch.keys().forEach(k -> peeks.add(Request.peek(0)));
                scenario.decideAndCompare(rule, new EquivalenceScenario.Batch(batch.keys(), peeks), step,
                        " (peek after)", pipelined(redis));
            }
        }

        /** The key's state keys in Redis, whatever their encoding, with their TTLs (for failure messages). */
        private String redisKeys(String key) {
            StringBuilder out = new StringBuilder();
            for (String k : topology.keys(prefix + ":{" + scenario.name() + ":" + key + "}:l*")) {
                String type = (String) topology.call(k, "TYPE", k);
                Object value = switch (type) {
                    case "hash" -> topology.call(k, "HGETALL", k);
                    case "string" -> topology.call(k, "GET", k);
                    case "zset" -> topology.call(k, "ZRANGE", k, "0", "-1", "WITHSCORES");
                    default -> type;
                };
                out.append("\n  ").append(k).append(" pttl=").append(topology.call(k, "PTTL", k)).append(' ')
                        .append(value);
            }
            return out.toString();
        }

        /** The first limit is of the algorithm under test; the others (if any) of any ported algorithm. */
        private List<Limit> randomLimits(String algorithm) {
            int n = 1 + r.nextInt(3);
            List<String> names = new ArrayList<>(PORTED.keySet());
            List<Limit> limits = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                String a = i == 0 ? algorithm : names.get(r.nextInt(names.size()));
                if (i > 0 && a.equals("concurrency") && limits.stream().anyMatch(l -> l instanceof Concurrency)) {
                    continue; // a rule holds at most one concurrency limit
                }
                limits.add(PORTED.get(a).apply(r).named("l" + i));
            }
            return limits;
        }

        /** In a third of the rules, each limit but a concurrency one is a shadow limit with probability 1/2. */
        private Rule randomShadow(Rule rule) {
            if (r.nextInt(3) != 0) {
                return rule;
            }
            List<String> shadow = new ArrayList<>();
            for (Limit limit : rule.limits()) {
                if (!(limit instanceof Concurrency) && r.nextBoolean()) {
                    shadow.add(limit.name());
                }
            }
            return rule.withShadow(shadow.toArray(String[]::new));
        }

        /** A new parameter set for one limit (the algorithm stays: a re-typed limit is another test). */
        private void updateLimit() {
            Limit target = rule.limits().get(r.nextInt(rule.limits().size()));
            Limit changed = PORTED.get(target.algorithm()).apply(r).named(target.name());
            rule = rule.withLimit(changed);
            for (int k = 0; k < KEYS; k++) {
                scenario.note(k, "update", changed);
            }
        }

        private Request randomRequest() {
            long max = Math.min(rule.maxPermits(), Limit.MAX_COUNT);
            long permits = 1 + (r.nextBoolean() ? r.nextInt((int) Math.min(max, 5)) : (long) (r.nextDouble() * max));
            permits = Math.min(permits, max);
            return switch (r.nextInt(4)) {
                case 0 -> Request.tryAcquireAtMost(r.nextInt(5) == 0
                        ? Math.min(Limit.MAX_COUNT, max + 1 + r.nextInt(10)) : permits); // best effort beyond max
                case 1 -> Request.peek(r.nextBoolean() ? 0 : permits);
                case 2 -> Request.reserve(permits, switch (r.nextInt(5)) {
                    case 0 -> 0;
                    case 1 -> r.nextInt(1_000);
                    case 2 -> Long.MAX_VALUE;
                    default -> r.nextInt(3) * 1_000_000L;
                });
                default -> Request.tryAcquire(permits);
            };
        }

        /** Mostly today; sometimes at the epoch, near the end of the clock (2^53 µs), or anywhere. */
        private long startTime() {
            return switch (r.nextInt(8)) {
                case 0 -> r.nextInt(1_000);
                // A day or more before the end: a clock held at MAX_TIME gives states a TTL of the 1 s slack only.
                case 1 -> Arith.MAX_TIME - 86_400_000_000L - r.nextLong(10L * 86_400_000_000L);
                case 2 -> r.nextLong(Arith.MAX_TIME + 1);
                default -> new ManualClock().nowMicros() + r.nextInt(1_000_000);
            };
        }

        /** Same-microsecond bursts, small and large steps, steps back; always within [0, MAX_TIME]. */
        private void advance() {
            long delta = switch (r.nextInt(8)) {
                case 0, 1 -> 0;
                case 2 -> r.nextInt(10);
                case 3 -> r.nextInt(1_500) * 1_000L;
                case 4 -> -r.nextInt(2_000); // clocks step back
                case 5 -> r.nextInt(120) * 1_000_000L;
                case 6 -> r.nextInt(10) == 0 ? r.nextInt(48) * 3_600_000_000L : r.nextInt(1_000_000);
                default -> r.nextInt(1_000_000);
            };
            scenario.stepClock(delta);
        }
    }
}
