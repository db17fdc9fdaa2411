package io.sluice.redis.modes;

import io.sluice.redis.Topology;
import io.sluice.redis.StoredState;
import io.sluice.redis.TcpProxy;
import io.sluice.redis.ports.RedisMemoryEquivalenceIT;
import io.sluice.redis.RedisStore;
import io.sluice.redis.RedisStoreException;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.Concurrency;
import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.Gcra;
import io.sluice.Limit;
import io.sluice.Mode;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.SlidingLog;
import io.sluice.Store;
import io.sluice.TokenBucket;
import io.sluice.internal.algorithm.Arith;
import io.sluice.redis.internal.DefaultRedisStore;
import io.sluice.redis.internal.RedisUris;
import io.sluice.redis.internal.StoreSettings;
import io.sluice.testkit.EquivalenceRun;
import io.sluice.testkit.EquivalenceScenario;
import io.sluice.testkit.ManualClock;
import io.sluice.testkit.Seeds;
import io.sluice.testkit.redis.RedisSentinel;
import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.SharedRedis;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Coalesced mode: requests for one (rule, key) that arrive while a call for it is in flight go together in the
 * next call and are decided inside Redis one after another, exactly as if each had been its own call.
 */
@ExtendWith(SharedRedis.class)
class CoalescedModeIT {

    private final String prefix = "coalesced-" + UUID.randomUUID().toString().substring(0, 8);

    // ---------------------------------------------------------------------------------------- equivalence

    static Stream<Arguments> algorithmsOnTopologies() {
        return RedisMemoryEquivalenceIT.PORTED.keySet().stream()
                .flatMap(a -> Stream.of(Arguments.of(a, Topology.STANDALONE), Arguments.of(a, Topology.CLUSTER)));
    }

    /**
     * Random bursts of every operation on a few keys at once, sent asynchronously in one go (so they queue
     * behind each key's call in flight and go out in batches), with the client clock held still until all are
     * answered; the in-memory store then decides the same requests in the same order, one by one.
     */
    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("algorithmsOnTopologies")
    void burstsDecideAsTheMemoryStoreDecidesTheSameRequestsOneByOne(String algorithm, Topology topology)
            throws Exception {
        EquivalenceRun run = new EquivalenceRun(algorithm + " on " + topology,
                Seeds.of("CoalescedModeIT " + algorithm + " on " + topology));
        int scenarios = topology == Topology.STANDALONE ? 10 : 3;
        try (RedisStore redis = topology.builder().prefix(prefix).clock(run.clock())
                .clientTimeSlack(Duration.ofHours(1)).timeout(Duration.ofSeconds(10)).build()) {
            long callsBefore = scriptCalls(topology);
            long decided = run.scenarios(scenarios, redis, scenario -> new Bursts(scenario, redis).run(algorithm));
            // Bursts queue behind each key's call in flight: far fewer calls than decisions, so batches ran.
            assertThat(scriptCalls(topology) - callsBefore).as("script calls for %d decisions", decided)
                    .isLessThan(decided * 3 / 4);
            assertIdle(redis);
        }
    }

    /** One rule, three keys, a series of bursts; answers how many requests (peeks included) the store decided. */
    private static final class Bursts {
        private static final int KEYS = 3;
        private static final int STEPS = 30;

        private final EquivalenceScenario scenario;
        private final Random r;
        private final ManualClock clock;
        private final Store memory;
        private final RedisStore redis;
        private final String context;
        private Rule rule;

        Bursts(EquivalenceScenario scenario, RedisStore redis) {
            this.scenario = scenario;
            this.r = scenario.random();
            this.clock = scenario.clock();
            this.memory = scenario.reference();
            this.redis = redis;
            this.context = scenario.context();
        }

        long run(String algorithm) throws Exception {
            rule = Rule.of(algorithm + "_" + scenario.name(), limits(algorithm)).withMode(Mode.coalesced());
            clock.setMicros(r.nextInt(4) == 0 ? Arith.MAX_TIME - 86_400_000_000L - r.nextInt(1_000_000)
                    : new ManualClock().nowMicros() + r.nextInt(1_000_000));
            long decided = 0;
            for (int step = 0; step < STEPS; step++) {
                advance();
                if (r.nextInt(8) == 0) {
                    Limit target = rule.limits().get(r.nextInt(rule.limits().size()));
                    rule = rule.withLimit(RedisMemoryEquivalenceIT.PORTED.get(target.algorithm()).apply(r)
                            .named(target.name()));
                }
                if (r.nextInt(10) == 0) {
                    String key = "k" + r.nextInt(KEYS);
                    memory.reset(rule, key);
                    redis.reset(rule, key);
                }
                // The burst: requests for the keys interleaved, all sent before any answer is awaited.
                List<String> keys = new ArrayList<>();
                List<Object> asks = new ArrayList<>();
                List<CompletableFuture<?>> answers = new ArrayList<>();
                int size = 1 + r.nextInt(r.nextBoolean() ? 8 : 60);
                for (int i = 0; i < size; i++) {
                    String key = "k" + r.nextInt(KEYS);
                    Object ask = r.nextInt(12) == 0 ? (Long) (long) r.nextInt(3) : request();
                    keys.add(key);
                    asks.add(ask);
                    answers.add(ask instanceof Long lease ? redis.releaseAsync(rule, key, lease)
                            : redis.decideAsync(rule, key, (Request) ask));
                }
                for (int i = 0; i < size; i++) {
                    Object expected = asks.get(i) instanceof Long lease ? (Object) memory.release(rule, keys.get(i), lease)
                            : memory.decide(rule, keys.get(i), (Request) asks.get(i));
                    int index = i;
                    int at = step;
                    assertThat(answers.get(i).get(30, TimeUnit.SECONDS))
                            .as(() -> context + ", step " + at + ", request " + index + " of " + size + " ("
                                    + asks.get(index) + " on " + keys.get(index) + "), t=" + clock.nowMicros() + ", "
                                    + rule).isEqualTo(expected);
                }
                for (int k = 0; k < KEYS; k++) {
                    String key = "k" + k;
                    assertThat(redis.decide(rule, key, Request.peek(0))).as(context + ", peek after step " + step)
                            .isEqualTo(memory.decide(rule, key, Request.peek(0)));
                }
                decided += size + KEYS;
            }
            return decided;
        }

        private List<Limit> limits(String algorithm) {
            List<Limit> limits = new ArrayList<>();
            limits.add(RedisMemoryEquivalenceIT.PORTED.get(algorithm).apply(r).named("l0"));
            if (r.nextBoolean()) {
                List<String> names = new ArrayList<>(RedisMemoryEquivalenceIT.PORTED.keySet());
                String other = names.get(r.nextInt(names.size()));
                if (!(other.equals("concurrency") && algorithm.equals("concurrency"))) {
                    limits.add(RedisMemoryEquivalenceIT.PORTED.get(other).apply(r).named("l1"));
                }
            }
            return limits;
        }

        private Request request() {
            long max = Math.min(rule.maxPermits(), Limit.MAX_COUNT);
            long permits = Math.min(max, 1 + (r.nextInt(4) == 0 ? (long) (r.nextDouble() * max) : r.nextInt(3)));
            return switch (r.nextInt(6)) {
                case 0 -> Request.tryAcquireAtMost(permits + r.nextInt(3));
                case 1 -> Request.peek(r.nextBoolean() ? 0 : permits);
                case 2 -> Request.reserve(permits, r.nextBoolean() ? Long.MAX_VALUE : r.nextInt(3) * 1_000_000L);
                default -> Request.tryAcquire(permits);
            };
        }

        /** Same-instant bursts, small and large steps, a step back now and then; within [0, MAX_TIME]. */
        private void advance() {
            long delta = switch (r.nextInt(6)) {
                case 0 -> 0;
                case 1 -> r.nextInt(1_000);
                case 2 -> r.nextInt(1_500) * 1_000L;
                case 3 -> -r.nextInt(2_000);
                case 4 -> r.nextInt(120) * 1_000_000L;
                default -> r.nextInt(1_000_000);
            };
            scenario.stepClock(delta);
        }
    }

    // ---------------------------------------------------------------------------------------- one hot key

    private static final Map<String, Limit> HOT = new LinkedHashMap<>();

    static {
        // Nothing refills within the test: exactly the limit may pass.
        HOT.put("fixed_window", FixedWindow.of(10, Duration.ofHours(1)));
        HOT.put("token_bucket", TokenBucket.of(10, 1, Duration.ofHours(1)));
        HOT.put("gcra", Gcra.of(1, Duration.ofHours(1)).withBurst(10));
        HOT.put("sliding_log", SlidingLog.of(10, Duration.ofHours(1)));
    }

    static Stream<Arguments> hotKeys() {
        return HOT.keySet().stream()
                .flatMap(a -> Stream.of(Arguments.of(a, Topology.STANDALONE), Arguments.of(a, Topology.CLUSTER)));
    }

    /**
     * 64 requests in flight on one key: exactly what the same requests admit one by one in memory, in far fewer
     * script calls than decisions. Sent by one thread without waiting, then by four threads at once.
     */
    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("hotKeys")
    void sixtyFourInFlightOnOneKeyAdmitExactlyTheLimitInFewCalls(String algorithm, Topology topology)
            throws Exception {
        Rule rule = Rule.of("hot_" + algorithm, HOT.get(algorithm)).withMode(Mode.coalesced());
        ManualClock clock = new ManualClock();
        long admittedOneByOne;
        try (Store memory = Store.memory().clock(clock).build()) {
            admittedOneByOne = Stream.generate(() -> memory.decide(rule, "k", Request.tryAcquire(1))).limit(64)
                    .filter(Decision::allowed).count();
        }
        assertThat(admittedOneByOne).isEqualTo(10);

        try (RedisStore redis = topology.builder().prefix(prefix).build()) {
            redis.decide(rule, "warm-up", Request.peek(0));
            long callsBefore = scriptCalls(topology);
            List<CompletableFuture<Decision>> decisions = new ArrayList<>();
            // Redis holds the first call for a moment, so the other 63 surely queue behind it: how many arrive
            // while a call is in flight must not depend on how fast this machine is today.
            pauseWrites(topology.nodes());
            for (int i = 0; i < 64; i++) {
                decisions.add(redis.decideAsync(rule, "k", Request.tryAcquire(1)));
            }
            assertThat(admitted(decisions)).as("admitted of 64").isEqualTo(admittedOneByOne);
            assertThat(scriptCalls(topology) - callsBefore).as("script calls for 64 decisions: the first alone,"
                    + " then the 63 that queued behind it").isEqualTo(2);

            callsBefore = scriptCalls(topology);
            List<List<CompletableFuture<Decision>>> perThread = new ArrayList<>();
            CountDownLatch start = new CountDownLatch(1);
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                List<CompletableFuture<Decision>> mine = new ArrayList<>();
                perThread.add(mine);
                Thread thread = new Thread(() -> {
                    try {
                        start.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                    for (int i = 0; i < 16; i++) {
                        mine.add(redis.decideAsync(rule, "k-threads", Request.tryAcquire(1)));
                    }
                }, "coalesced-caller-" + t);
                threads.add(thread);
                thread.start();
            }
            pauseWrites(topology.nodes());
            start.countDown();
            for (Thread thread : threads) {
                thread.join(10_000);
            }
            decisions.clear();
            perThread.forEach(decisions::addAll);
            assertThat(decisions).hasSize(64);
            assertThat(admitted(decisions)).as("admitted of 64 from four threads").isEqualTo(admittedOneByOne);
            assertThat(scriptCalls(topology) - callsBefore).as("script calls for 64 decisions from four threads")
                    .isPositive().isLessThan(64);
            assertIdle(redis);
        }
    }

    private static long admitted(List<CompletableFuture<Decision>> decisions) throws Exception {
        long admitted = 0;
        for (CompletableFuture<Decision> d : decisions) {
            if (d.get(10, TimeUnit.SECONDS).allowed()) {
                admitted++;
            }
        }
        return admitted;
    }

    /**
     * Idle targets leave the coalescer. The last answer completes just before its target's next round finds
     * nothing left to send, on Lettuce's thread: so wait a little.
     */
    private static void assertIdle(RedisStore redis) throws InterruptedException {
        DefaultRedisStore store = (DefaultRedisStore) redis;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (store.coalescedTargetsInFlight() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertThat(store.coalescedTargetsInFlight()).as("coalesced targets in flight once all is answered").isZero();
    }

    /** Redis holds scripts (they may write) for 300 ms on each node: well within the store's 1 s timeout. */
    private static void pauseWrites(List<RedisServer> nodes) {
        for (RedisServer node : nodes) {
            node.call("CLIENT", "PAUSE", "300", "WRITE");
        }
    }

    /** Script calls (EVALSHA or FCALL) the nodes have run so far. */
    private static long scriptCalls(Topology topology) {
        return Topology.scriptCalls(topology.nodes());
    }

    private static long scriptCalls(List<RedisServer> nodes) {
        return Topology.scriptCalls(nodes);
    }

    /** Through Sentinel the store talks to the master it names: coalescing works the same. */
    @Test
    void throughSentinelToo() throws Exception {
        Rule rule = Rule.of("sentinel", FixedWindow.of(10, Duration.ofHours(1))).withMode(Mode.coalesced());
        try (RedisServer master = RedisServer.start(); RedisSentinel sentinel = RedisSentinel.start(master, "mymaster");
             RedisStore store = RedisStore.builder().uri(sentinel.uri()).prefix(prefix).build()) {
            store.decide(rule, "warm-up", Request.peek(0));
            long callsBefore = scriptCalls(List.of(master));
            List<CompletableFuture<Decision>> decisions = new ArrayList<>();
            pauseWrites(List.of(master));
            for (int i = 0; i < 32; i++) {
                decisions.add(store.decideAsync(rule, "k", Request.tryAcquire(1)));
            }
            assertThat(admitted(decisions)).isEqualTo(10);
            assertThat(scriptCalls(List.of(master)) - callsBefore).isEqualTo(2);
        }
    }

    // ---------------------------------------------------------------------------------------- replays and failures

    /** A batch call whose reply was lost is re-sent by Lettuce and answered from its stored reply, as a whole. */
    @Test
    void aReplayedBatchCallIsChargedOnce() throws Exception {
        Rule rule = Rule.of("replayed", FixedWindow.of(5, Duration.ofMinutes(1))).withMode(Mode.coalesced());
        ManualClock clock = new ManualClock();
        try (TcpProxy proxy = new TcpProxy(RedisServer.shared().port());
             DefaultRedisStore store = DefaultRedisStore.connect(new StoreSettings(RedisUris.parse(List.of(proxy.uri()),
                     false, Duration.ofSeconds(5)), false, prefix, Duration.ofSeconds(5), clock, true))) {
            store.decide(rule, "warm-up", Request.tryAcquire(1));
            int connectionsBefore = proxy.connections();
            // Only the batch call carries the word "batch": its reply is the one lost.
            proxy.dropReplyAfter("batch");
            List<CompletableFuture<Decision>> decisions = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                decisions.add(store.decideAsync(rule, "k", Request.tryAcquire(1)));
            }
            List<Decision> answers = new ArrayList<>();
            for (CompletableFuture<Decision> d : decisions) {
                answers.add(d.get(10, TimeUnit.SECONDS));
            }
            assertThat(proxy.connections()).as("Lettuce reconnected").isEqualTo(connectionsBefore + 1);
            assertThat(store.replayedReplies()).as("the script saw the batch twice").isEqualTo(1);
            assertThat(answers.stream().filter(Decision::allowed).count()).isEqualTo(5);
            assertThat(answers.stream().map(Decision::remaining).toList()).containsExactly(4L, 3L, 2L, 1L, 0L, 0L, 0L,
                    0L);
            StoredState state = StoredState.parse(RedisServer.shared().call("GET", prefix + ":{replayed:k}:fixed_window"));
            assertThat(state.count()).as("charged once").isEqualTo(5);
        }
    }

    /** When a batch call fails, every request of it fails with the same exception; then the key recovers. */
    @Test
    void aFailedBatchCallFailsEachOfItsRequestsWithTheSameException() throws Exception {
        Rule rule = Rule.of("failing", FixedWindow.of(100, Duration.ofMinutes(1))).withMode(Mode.coalesced());
        Duration timeout = Duration.ofMillis(300);
        try (RedisServer server = RedisServer.start();
             RedisStore store = RedisStore.builder().uri(server.uri()).prefix(prefix).timeout(timeout).build()) {
            store.decide(rule, "k", Request.tryAcquire(1));
            server.pause();
            List<CompletableFuture<Decision>> decisions = new ArrayList<>();
            try {
                for (int i = 0; i < 10; i++) {
                    decisions.add(store.decideAsync(rule, "k", Request.tryAcquire(1)));
                }
                CompletableFuture.allOf(decisions.toArray(new CompletableFuture<?>[0])).handle((x, e) -> null)
                        .get(5, TimeUnit.SECONDS);
            } finally {
                server.resume();
            }
            List<Throwable> errors = new ArrayList<>();
            for (CompletableFuture<Decision> d : decisions) {
                assertThatThrownBy(() -> d.get()).isInstanceOf(ExecutionException.class)
                        .hasCauseInstanceOf(RedisStoreException.class);
                errors.add(d.handle((x, e) -> e).get());
            }
            // The first went alone; the nine that queued behind it shared one call and one failure.
            assertThat(errors.subList(1, 10)).allSatisfy(e -> assertThat(e).isSameAs(errors.get(1)));
            assertThat(errors.get(1)).isNotSameAs(errors.get(0));
            assertThat(store.decide(rule, "k", Request.tryAcquire(1)).allowed()).isTrue();
            assertIdle(store);
        }
    }

    /** Releases of a coalesced rule go in line with its decisions, in one call with them. */
    @ParameterizedTest
    @EnumSource(Topology.class)
    void releasesTravelInLineWithAcquires(Topology topology) throws Exception {
        Rule rule = Rule.of("leases", Concurrency.of(2, Duration.ofMinutes(1))).withMode(Mode.coalesced());
        try (RedisStore redis = topology.builder().prefix(prefix).build()) {
            Decision first = redis.decide(rule, "k", Request.tryAcquire(1));
            Decision second = redis.decide(rule, "k", Request.tryAcquire(1));
            CompletableFuture<Decision> blocker = redis.decideAsync(rule, "k", Request.tryAcquire(1));
            CompletableFuture<Boolean> released = redis.releaseAsync(rule, "k", first.lease());
            CompletableFuture<Decision> afterRelease = redis.decideAsync(rule, "k", Request.tryAcquire(1));
            CompletableFuture<Boolean> releasedAgain = redis.releaseAsync(rule, "k", first.lease());
            assertThat(blocker.get(5, TimeUnit.SECONDS).allowed()).as("full").isFalse();
            assertThat(released.get(5, TimeUnit.SECONDS)).isTrue();
            assertThat(afterRelease.get(5, TimeUnit.SECONDS).allowed()).as("the released slot").isTrue();
            assertThat(releasedAgain.get(5, TimeUnit.SECONDS)).isFalse();
            assertThat(redis.release(rule, "k", second.lease())).isTrue();
        }
    }
}
