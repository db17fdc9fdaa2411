package io.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.Limit;
import io.sluice.RefreshPeriod;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.SmoothBursty;
import io.sluice.SmoothWarmingUp;
import io.sluice.Store;
import io.sluice.redis.internal.KeyLayout;
import io.sluice.testkit.ManualClock;
import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.SharedRedis;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The Lua ports decide exactly as the Java transitions: random rules and request sequences, replayed on the
 * in-memory store and on Redis with the same manual clock, must give equal decisions step by step. Each port
 * adds a generator of its limits to {@link #PORTED}.
 *
 * <p>For each ported algorithm and topology, {@link #SEQUENCES} sequences run side by side: a sequence is one
 * rule (its first limit of the algorithm under test, then up to two random ported limits) on two keys, and
 * {@link #STEPS} steps of requests (tries, best-effort, reservations with bounded and unbounded waits, peeks),
 * parameter changes and resets. All sequences share one clock that moves forward (also by nothing, for
 * same-microsecond bursts) and sometimes back; in each step a random three quarters of the sequences act, so
 * each sees its own time deltas. A step's requests go to Redis in pipelined {@link RedisStore#decideAll}
 * batches (one script call per request), which keeps thousands of sequences within seconds; a failure names
 * the seed, the sequence and its history. Each sequence has its own memory store: a shared one would sweep
 * expired keys that Redis keeps until their TTL, which a clock stepping back would tell apart.
 *
 * <p>With a client clock Redis counts a key's TTL on its own clock (the remaining manual time plus a second of
 * slack), and this test's manual clock often moves slower than real time, so a state the manual clock still
 * holds alive could vanish from Redis. Decisions never depend on TTLs (the script compares expiry with the
 * client's time itself; the edge-case tests check TTLs), so the batches are chunks that take far less than the
 * second of slack, and each chunk's state keys are made persistent right after it, as memory keeps an entry
 * until a sweep.
 */
@ExtendWith(SharedRedis.class)
class RedisMemoryEquivalenceIT {

    /** A random limit of each ported algorithm, named by the caller. */
    private static final List<Function<Random, Limit>> PORTED = List.of(RedisMemoryEquivalenceIT::fixedWindow,
            RedisMemoryEquivalenceIT::smoothBursty, RedisMemoryEquivalenceIT::smoothWarmingUp,
            RedisMemoryEquivalenceIT::refreshPeriod);

    /** Sequences per algorithm and topology. */
    private static final int SEQUENCES = 1_000;
    private static final int STEPS = 40;
    /** Requests per pipelined batch: small enough to take far less than the one second of TTL slack. */
    private static final int CHUNK = 100;

    private static final long[] WINDOWS_MICROS = {1, 7, 1_000, 250_000, 1_000_000, 60_000_000,
            31_622_400_000_000L};

    /** Rates with awkward binary expansions, the extremes, and Guava's test values. */
    private static final double[] RATES = {1.0 / 31_622_400, 1.0 / 3, 0.5, 1.0, 2.0, 3.0, 5.0, 7.3, 0.1, 100.0,
            1_000_000.0};

    private static Limit fixedWindow(Random r) {
        long limit = r.nextInt(4) == 0 ? Limit.MAX_COUNT - r.nextInt(3) : 1 + r.nextInt(8);
        return new FixedWindow("fixed_window", limit, Duration.ofNanos(1_000 * pick(r, WINDOWS_MICROS)),
                r.nextBoolean() ? FixedWindow.Align.EPOCH : FixedWindow.Align.FIRST_REQUEST, r.nextBoolean());
    }

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

    private static long pick(Random r, long[] values) {
        return values[r.nextInt(values.length)];
    }

    static Stream<Arguments> cases() {
        List<Arguments> cases = new ArrayList<>();
        for (Topology topology : Topology.values()) {
            for (Function<Random, Limit> generator : PORTED) {
                cases.add(Arguments.of(topology, generator.apply(new Random(0)).algorithm()));
            }
        }
        return cases.stream();
    }

    /** One rule on two keys, with its own memory store, and what happened to it (for failure messages). */
    private static final class Sequence {
        final int index;
        final Store memory;
        final List<String> history = new ArrayList<>();
        Rule rule;

        Sequence(int index, Store memory, Rule rule) {
            this.index = index;
            this.memory = memory;
            this.rule = rule;
        }
    }

    @ParameterizedTest(name = "{1} on {0}")
    @MethodSource("cases")
    void randomSequencesDecideIdentically(Topology topology, String algorithm) {
        // -Dsluice.seed=<seed from a failure message> replays a failing run.
        long seed = Long.getLong("sluice.seed", new Random().nextLong());
        Random r = new Random(seed);
        Function<Random, Limit> first = PORTED.stream()
                .filter(g -> g.apply(new Random(0)).algorithm().equals(algorithm)).findFirst().orElseThrow();
        ManualClock clock = new ManualClock();
        String prefix = "eq-" + UUID.randomUUID().toString().substring(0, 8);
        List<Sequence> sequences = new ArrayList<>();
        Keys keys = new Keys(topology, prefix);
        // A long timeout: test machines may be busy.
        try (RedisStore redis = topology.builder().prefix(prefix).clock(clock).timeout(Duration.ofSeconds(60))
                .build()) {
            for (int i = 0; i < SEQUENCES; i++) {
                List<Limit> limits = new ArrayList<>(List.of(first.apply(r).named("l0")));
                for (int n = r.nextInt(3); n > 0; n--) {
                    limits.add(PORTED.get(r.nextInt(PORTED.size())).apply(r).named("l" + limits.size()));
                }
                sequences.add(new Sequence(i, Store.memory().clock(clock).build(), Rule.of("s" + i, limits)));
            }
            keys.warmUp(redis);
            for (int step = 0; step < STEPS; step++) {
                advance(r, clock);
                String context = "seed " + seed + ", " + algorithm + " on " + topology + ", step " + step + ", t="
                        + clock.nowMicros();
                try {
                    step(r, redis, keys, sequences, context);
                } catch (RuntimeException e) {
                    throw new AssertionError(context + ": " + e, e);
                }
            }
        } finally {
            sequences.forEach(s -> s.memory.close());
            keys.deleteAll();
        }
    }

    /**
     * The state keys of one test, on the node that owns each: made persistent after each chunk (see the class
     * comment), dumped for failure messages, deleted at the end.
     */
    private static final class Keys {
        private static final String EACH = "for _, k in ipairs(ARGV) do redis.call('PERSIST', k) end return 0";
        private static final String DELETE = """
                local cursor = "0"
                repeat
                  local r = redis.call("SCAN", cursor, "MATCH", ARGV[1], "COUNT", 1000)
                  cursor = r[1]
                  for _, k in ipairs(r[2]) do redis.call("DEL", k) end
                until cursor == "0"
                return 0
                """;

        private final Topology topology;
        private final String prefix;
        private final RedisServer[] owners = new RedisServer[16384];

        Keys(Topology topology, String prefix) {
            this.topology = topology;
            this.prefix = prefix;
            List<RedisServer> nodes = topology.nodes();
            if (nodes.size() == 1) {
                Arrays.fill(owners, nodes.get(0));
                return;
            }
            for (Object range : (List<?>) nodes.get(0).call("CLUSTER", "SLOTS")) {
                List<?> r = (List<?>) range;
                long port = (Long) ((List<?>) r.get(2)).get(1);
                RedisServer owner = nodes.stream().filter(n -> n.port() == port).findFirst().orElseThrow();
                for (long slot = (Long) r.get(0); slot <= (Long) r.get(1); slot++) {
                    owners[(int) slot] = owner;
                }
            }
        }

        /**
         * One peek per node before the first real batch. The store's batch connection opens its node connections
         * lazily, and Lettuce can leave commands unflushed when a batch sends several to a node whose connection
         * is still opening (redis/lettuce#2420): they would time out. A single command per node is safe, and
         * opens them all.
         */
        void warmUp(RedisStore redis) {
            List<RedisServer> nodes = topology.nodes();
            List<BatchRequest> peeks = new ArrayList<>();
            Limit limit = FixedWindow.of(1, Duration.ofSeconds(1));
            for (int i = 0; peeks.size() < nodes.size() && i < 10_000; i++) {
                Rule rule = Rule.of("warm-up", limit);
                RedisServer node = owners[KeyLayout.slot(stateKey(rule, "w" + i, limit))];
                if (node == nodes.get(peeks.size())) {
                    peeks.add(BatchRequest.of(rule, "w" + i, Request.peek(0)));
                }
            }
            redis.decideAll(peeks);
        }

        String stateKey(Rule rule, String key, Limit limit) {
            return prefix + ":{" + rule.name() + ":" + key + "}:" + limit.name();
        }

        /** PERSIST on every state key of the requests' targets: one script call per node. */
        void persist(List<BatchRequest> requests) {
            Map<RedisServer, List<String>> byNode = new LinkedHashMap<>();
            for (BatchRequest q : requests) {
                BatchRequest.Target t = q.targets().get(0);
                for (Limit limit : t.rule().limits()) {
                    String k = stateKey(t.rule(), t.key(), limit);
                    byNode.computeIfAbsent(owners[KeyLayout.slot(k)], n -> new ArrayList<>(List.of("EVAL", EACH, "0")))
                            .add(k);
                }
            }
            byNode.forEach((node, command) -> node.call(command.toArray(new String[0])));
        }

        String dump(Rule rule, String key) {
            StringBuilder out = new StringBuilder();
            for (Limit limit : rule.limits()) {
                String k = stateKey(rule, key, limit);
                RedisServer node = owners[KeyLayout.slot(k)];
                Object value;
                try {
                    value = node.call("HGETALL", k);
                } catch (RuntimeException e) { // not a hash: the storage encoding is the store's business
                    value = node.call("GET", k);
                }
                out.append("\n  ").append(k).append(" pttl ").append(node.call("PTTL", k)).append(" ").append(value);
            }
            return out.toString();
        }

        void deleteAll() {
            topology.nodes().forEach(node -> node.call("EVAL", DELETE, "0", prefix + ":{*}:l?"));
        }
    }

    private static void step(Random r, RedisStore redis, Keys keys, List<Sequence> sequences, String context) {
        List<Sequence> acting = new ArrayList<>();
        List<BatchRequest> requests = new ArrayList<>();
        for (Sequence s : sequences) {
            if (r.nextInt(4) == 0) {
                continue;
            }
            String key = "k" + r.nextInt(2);
            int what = r.nextInt(20);
            if (what == 0) {
                List<Limit> limits = s.rule.limits();
                Limit target = limits.get(r.nextInt(limits.size()));
                s.rule = s.rule.withLimit(sameKind(r, target).named(target.name()));
                s.history.add(context + ": updateLimit " + s.rule);
                continue;
            }
            if (what == 1) {
                s.memory.reset(s.rule, key);
                redis.reset(s.rule, key);
                s.history.add(context + ": reset " + key);
                continue;
            }
            acting.add(s);
            requests.add(BatchRequest.of(s.rule, key, request(r, s.rule, what % 4)));
        }
        List<BatchRequest> peeks = new ArrayList<>();
        for (int i = 0; i < requests.size(); i++) {
            BatchRequest q = requests.get(i);
            peeks.add(BatchRequest.of(q.targets().get(0).rule(), q.targets().get(0).key(), Request.peek(0)));
        }
        compare(redis, keys, acting, requests, context, "");
        compare(redis, keys, acting, peeks, context, " (peek after)");
    }

    /** Decides {@code requests} on Redis in chunks and in memory one by one, and compares. */
    private static void compare(RedisStore redis, Keys keys, List<Sequence> acting, List<BatchRequest> requests,
                                String context, String what) {
        for (int from = 0; from < requests.size(); from += CHUNK) {
            List<BatchRequest> chunk = requests.subList(from, Math.min(requests.size(), from + CHUNK));
            List<Decision> actual = redis.decideAll(chunk);
            keys.persist(chunk);
            for (int i = 0; i < chunk.size(); i++) {
                Sequence s = acting.get(from + i);
                BatchRequest q = chunk.get(i);
                String key = q.targets().get(0).key();
                Decision expected = s.memory.decide(s.rule, key, q.request());
                if (what.isEmpty()) {
                    s.history.add(context + ": " + key + " " + q.request() + " -> " + expected);
                }
                if (!actual.get(i).equals(expected)) {
                    assertThat(actual.get(i)).as(at(context, s, key, q.request()) + what + keys.dump(s.rule, key))
                            .isEqualTo(expected);
                }
            }
        }
    }

    private static String at(String context, Sequence s, String key, Request request) {
        return context + ", sequence " + s.index + ", key " + key + ", " + request + ", rule " + s.rule
                + "\n  history:\n    " + String.join("\n    ", s.history);
    }

    /** A random limit of the same algorithm as {@code target}. */
    private static Limit sameKind(Random r, Limit target) {
        for (Function<Random, Limit> generator : PORTED) {
            Limit limit = generator.apply(r);
            if (limit.getClass() == target.getClass()) {
                return limit;
            }
        }
        throw new IllegalStateException("no generator for " + target);
    }

    private static Request request(Random r, Rule rule, int what) {
        long max = Math.min(rule.maxPermits(), Limit.MAX_COUNT);
        long permits = switch (r.nextInt(8)) {
            case 0, 1, 2, 3 -> 1 + r.nextInt((int) Math.min(max, 5));
            case 4, 5, 6 -> 1 + (long) (r.nextDouble() * Math.min(max, 1_000));
            default -> 1 + (long) (r.nextDouble() * max);
        };
        permits = Math.min(permits, max);
        return switch (what) {
            case 0 -> Request.tryAcquireAtMost(permits);
            case 1 -> Request.peek(r.nextBoolean() ? 0 : permits);
            case 2 -> Request.reserve(permits, maxWait(r));
            default -> Request.tryAcquire(permits);
        };
    }

    private static long maxWait(Random r) {
        return switch (r.nextInt(8)) {
            case 0 -> 0;
            case 1 -> Long.MAX_VALUE; // acquire: unbounded
            case 2 -> 100_000_000_000_000_000L; // beyond 2^53, which a Lua double rounds
            case 3 -> r.nextInt(1_000);
            default -> r.nextInt(3_000_000);
        };
    }

    private static void advance(Random r, ManualClock clock) {
        switch (r.nextInt(8)) {
            case 0 -> { }
            case 1 -> clock.advanceMicros(r.nextInt(10));
            case 2 -> clock.advanceMillis(r.nextInt(1_500));
            case 3 -> clock.advanceMicros(-r.nextInt(2_000)); // clocks step back
            case 4 -> clock.advance(Duration.ofSeconds(r.nextInt(120)));
            case 5 -> clock.advance(Duration.ofMinutes(r.nextInt(3_000))); // buckets fill, keys expire
            default -> clock.advanceMicros(r.nextInt(1_000_000));
        }
    }
}
