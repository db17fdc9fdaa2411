package io.sluice.redis.modes;

import io.sluice.redis.ports.RedisMemoryEquivalenceIT;
import io.sluice.redis.RedisStore;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Concurrency;
import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.Gcra;
import io.sluice.Limit;
import io.sluice.Mode;
import io.sluice.RateLimiter;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.SlidingLog;
import io.sluice.SluiceListener;
import io.sluice.TokenBucket;
import io.sluice.redis.internal.DefaultRedisStore;
import io.sluice.testkit.ManualClock;
import io.sluice.testkit.Seeds;
import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.SharedRedis;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Cached denials (docs/cached-denials.md): a store that answers denials it has learned locally decides exactly as
 * one that asks Redis every time, for every algorithm where the cache applies; and where it does not apply
 * (reset, count_rejected, concurrency, other modes, fewer permits, a changed rule, the switch off) it is not used.
 */
@ExtendWith(SharedRedis.class)
class RedisDenialCacheIT {

    private static final int SCENARIOS = 30;
    private static final int STEPS = 60;

    /** Every algorithm but concurrency, which the cache skips (a release opens the key early). */
    static Stream<String> cachedAlgorithms() {
        return RedisMemoryEquivalenceIT.PORTED.keySet().stream().filter(a -> !a.equals("concurrency"));
    }

    private static RedisStore.Builder store(ManualClock clock, String prefix) {
        // A client clock that barely moves in real time: keys must outlive the test, hence the long slack.
        return RedisStore.builder().uri(RedisServer.shared().uri()).prefix(prefix).clock(clock)
                .clientTimeSlack(Duration.ofHours(1)).timeout(Duration.ofSeconds(10));
    }

    private static String prefix() {
        return "dc-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /**
     * Random rules (one or two limits, the first of the algorithm under test) and random requests at random
     * times, with times chosen at and one microsecond before each retry-after: the store with the cache and the
     * store without decide alike, except that a cached denial's remaining count is the one Redis reported when
     * it denied (time may have refilled some since, so never more than a fresh answer's). The cache must have
     * answered some of them, or the comparison proves nothing.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("cachedAlgorithms")
    void aCachedStoreDecidesAsOneThatAlwaysAsksRedis(String algorithm) {
        long seed = Seeds.of("RedisDenialCacheIT " + algorithm);
        Random r = new Random(seed);
        ManualClock clock = new ManualClock();
        long cachedSteps = 0;
        try (RedisStore cached = store(clock, prefix()).build();
             RedisStore direct = store(clock, prefix()).cacheDenials(false).build()) {
            for (int scenario = 0; scenario < SCENARIOS; scenario++) {
                Rule rule = rule(algorithm, r);
                String key = "k" + scenario;
                long lastRetry = 0;
                for (int step = 0; step < STEPS; step++) {
                    advance(clock, r, lastRetry);
                    int what = r.nextInt(100);
                    if (what < 3) {
                        cached.reset(rule, key);
                        direct.reset(rule, key);
                        continue;
                    }
                    if (what < 5) {
                        rule = rule.withLimit(limit(algorithm, r));   // same name: a limit change
                        continue;
                    }
                    Request request = request(r, rule, what);
                    Decision expected = direct.decide(rule, key, request);
                    Decision actual = cached.decide(rule, key, request);
                    String context = "seed " + seed + ", " + rule + ", key " + key + ", step " + step + ", t="
                            + clock.nowMicros() + ", " + request;
                    if (actual.source() == Decision.Source.CACHED) {
                        cachedSteps++;
                        // Several limits: Redis reports for a limit that would admit the remaining count and
                        // reset-after of its state as if charged at the current instant, which move with time; the
                        // cache cannot know them. One limit: remaining as at the denial, time can only refill.
                        boolean one = rule.limits().size() == 1;
                        long reset = one ? actual.resetAfterMicros() : expected.resetAfterMicros();
                        assertThat(new Decision(actual.allowed(), actual.granted(), expected.remaining(),
                                actual.retryAfterMicros(), reset, actual.waitMicros(), actual.limit(), actual.lease()))
                                .as(context).isEqualTo(expected);
                        if (one) {
                            assertThat(actual.remaining()).as(context).isLessThanOrEqualTo(expected.remaining());
                        }
                    } else {
                        assertThat(actual).as(context).isEqualTo(expected);
                    }
                    lastRetry = expected.allowed() ? 0 : expected.retryAfterMicros();
                }
            }
            assertThat(cachedSteps).as("seed " + seed + ": denials answered from the cache").isPositive();
            assertThat(((DefaultRedisStore) cached).cachedDenials()).isEqualTo(cachedSteps);
            assertThat(((DefaultRedisStore) direct).cachedDenials()).isZero();
        }
    }

    private static Rule rule(String algorithm, Random r) {
        Limit first = limit(algorithm, r);
        if (r.nextInt(3) > 0) {
            return Rule.of("rule", first);
        }
        List<String> others = cachedAlgorithms().toList();
        Limit second = limit(others.get(r.nextInt(others.size())), r).named("second");
        return Rule.of("rule", first, second);
    }

    private static Limit limit(String algorithm, Random r) {
        return RedisMemoryEquivalenceIT.PORTED.get(algorithm).apply(r);
    }

    /** Mostly tries of 1 to 3 permits (as many as the rule allows), some reservations, best-effort tries, peeks. */
    private static Request request(Random r, Rule rule, int what) {
        long permits = Math.min(rule.maxPermits(), 1 + r.nextInt(3));
        if (what < 80) {
            return Request.tryAcquire(permits);
        }
        if (what < 88) {
            return Request.tryAcquireAtMost(permits);
        }
        if (what < 94) {
            return Request.peek(permits);
        }
        return Request.reserve(permits, 1 + r.nextInt(1_000_000));
    }

    /** No time, a little, or exactly at or just before the last retry-after, where an off-by-one would show. */
    private static void advance(ManualClock clock, Random r, long lastRetry) {
        boolean retry = lastRetry > 0 && lastRetry < 1_000_000_000_000L;
        switch (r.nextInt(6)) {
            case 0 -> { }
            case 1 -> clock.advanceMicros(1);
            case 2 -> clock.advanceMicros(1 + r.nextInt(100_000));
            case 3 -> clock.advanceMicros(retry ? lastRetry - 1 : 1 + r.nextInt(1_000));
            case 4 -> clock.advanceMicros(retry ? lastRetry : 1 + r.nextInt(10));
            default -> clock.advanceMicros(retry ? 1 + r.nextLong(lastRetry) : 1 + r.nextInt(5_000_000));
        }
    }

    // ---------------------------------------------------------------------------------------- where it applies

    private static final Rule ONE_PER_SECOND = Rule.of("login", TokenBucket.of(1, 1, Duration.ofSeconds(1)));

    @Test
    void aDeniedTryIsDeniedLocallyUntilItsRetryAfterWithTheFieldsRedisGave() {
        ManualClock clock = new ManualClock();
        try (RedisStore store = store(clock, prefix()).build()) {
            DefaultRedisStore s = (DefaultRedisStore) store;
            assertThat(store.decide(ONE_PER_SECOND, "u", Request.tryAcquire(1)).allowed()).isTrue();
            Decision denied = store.decide(ONE_PER_SECOND, "u", Request.tryAcquire(1));
            assertThat(denied.allowed()).isFalse();
            assertThat(denied.source()).isEqualTo(Decision.Source.STORE);
            assertThat(denied.retryAfterMicros()).isEqualTo(1_000_000);

            clock.advanceMicros(400_000);
            Decision again = store.decide(ONE_PER_SECOND, "u", Request.tryAcquire(1));
            assertThat(again.source()).isEqualTo(Decision.Source.CACHED);
            assertThat(again.allowed()).isFalse();
            assertThat(again.retryAfterMicros()).isEqualTo(600_000);
            assertThat(again.resetAfterMicros()).isEqualTo(denied.resetAfterMicros() - 400_000);
            assertThat(again.limit()).isEqualTo(denied.limit());
            assertThat(again.remaining()).isEqualTo(denied.remaining());
            assertThat(s.cachedDenials()).isEqualTo(1);

            clock.advanceMicros(599_999);
            assertThat(store.decide(ONE_PER_SECOND, "u", Request.tryAcquire(1)).source())
                    .isEqualTo(Decision.Source.CACHED);
            clock.advanceMicros(1);
            Decision atDeadline = store.decide(ONE_PER_SECOND, "u", Request.tryAcquire(1));
            assertThat(atDeadline.allowed()).isTrue();
            assertThat(s.cachedDenials()).isEqualTo(2);
        }
    }

    @Test
    void aLimiterTellsItsListenerWhichDenialsCameFromTheCache() {
        ManualClock clock = new ManualClock();
        List<Decision.Source> sources = new java.util.concurrent.CopyOnWriteArrayList<>();
        SluiceListener listener = new SluiceListener() {
            @Override
            public void onDecision(Rule rule, Decision decision) {
                sources.add(decision.source());
            }
        };
        try (RedisStore store = store(clock, prefix()).build();
             RateLimiter limiter = RateLimiter.builder(ONE_PER_SECOND).store(store).listener(listener).build()) {
            for (int i = 0; i < 4; i++) {
                limiter.tryAcquire("u");
            }
            assertThat(limiter.tryAcquireAsync("u", 1).join().source()).isEqualTo(Decision.Source.CACHED);
        }
        assertThat(sources).containsExactly(Decision.Source.STORE, Decision.Source.STORE, Decision.Source.CACHED,
                Decision.Source.CACHED, Decision.Source.CACHED);
    }

    @Test
    void triesForOtherPermitsThanTheDeniedOnesAskRedis() {
        ManualClock clock = new ManualClock();
        Rule three = Rule.of("r", TokenBucket.of(3, 1, Duration.ofSeconds(1)));
        try (RedisStore store = store(clock, prefix()).build()) {
            assertThat(store.decide(three, "u", Request.tryAcquire(2)).allowed()).isTrue();
            assertThat(store.decide(three, "u", Request.tryAcquire(2)).allowed()).isFalse();
            assertThat(store.decide(three, "u", Request.tryAcquire(2)).source()).isEqualTo(Decision.Source.CACHED);
            // More permits: denied, but with a longer retry-after than the cache knows.
            Decision three3 = store.decide(three, "u", Request.tryAcquire(3));
            assertThat(three3.source()).isEqualTo(Decision.Source.STORE);
            assertThat(three3.retryAfterMicros()).isEqualTo(2_000_000);
            // Fewer permits: may pass.
            Decision one = store.decide(three, "u", Request.tryAcquire(1));
            assertThat(one.allowed()).isTrue();
            assertThat(one.source()).isEqualTo(Decision.Source.STORE);
        }
    }

    @Test
    void anAdmissionThroughThisStoreDropsTheDenialItMayHaveLengthened() {
        ManualClock clock = new ManualClock();
        Rule gcra = Rule.of("g", Gcra.of(1, Duration.ofSeconds(1)).withBurst(1));
        try (RedisStore store = store(clock, prefix()).build()) {
            store.decide(gcra, "u", Request.tryAcquire(1));
            assertThat(store.decide(gcra, "u", Request.tryAcquire(1)).retryAfterMicros()).isEqualTo(1_000_000);
            assertThat(store.decide(gcra, "u", Request.reserve(1, 5_000_000)).allowed()).isTrue();
            Decision d = store.decide(gcra, "u", Request.tryAcquire(1));
            assertThat(d.source()).isEqualTo(Decision.Source.STORE);
            assertThat(d.retryAfterMicros()).isEqualTo(2_000_000);
        }
    }

    // ---------------------------------------------------------------------------------------- where it does not

    @Test
    void afterAResetTheNextTryIsAllowed() {
        ManualClock clock = new ManualClock();
        try (RedisStore store = store(clock, prefix()).build()) {
            store.decide(ONE_PER_SECOND, "u", Request.tryAcquire(1));
            store.decide(ONE_PER_SECOND, "u", Request.tryAcquire(1));
            assertThat(store.decide(ONE_PER_SECOND, "u", Request.tryAcquire(1)).source())
                    .isEqualTo(Decision.Source.CACHED);
            store.reset(ONE_PER_SECOND, "u");
            Decision after = store.decide(ONE_PER_SECOND, "u", Request.tryAcquire(1));
            assertThat(after.allowed()).isTrue();
            assertThat(after.source()).isEqualTo(Decision.Source.STORE);
        }
    }

    @Test
    void aRaisedLimitIsAskedAtOnce() {
        ManualClock clock = new ManualClock();
        try (RedisStore store = store(clock, prefix()).build()) {
            store.decide(ONE_PER_SECOND, "u", Request.tryAcquire(1));
            store.decide(ONE_PER_SECOND, "u", Request.tryAcquire(1));
            // Another algorithm under the same limit name: the state is dropped, so Redis admits.
            Rule raised = ONE_PER_SECOND.withLimit(Gcra.of(5, Duration.ofSeconds(1)).named("token_bucket"));
            Decision d = store.decide(raised, "u", Request.tryAcquire(1));
            assertThat(d.source()).isEqualTo(Decision.Source.STORE);
            assertThat(d.allowed()).isTrue();
        }
    }

    @Test
    void countRejectedRulesAlwaysAskRedisSoEveryAttemptIsCharged() {
        ManualClock clock = new ManualClock();
        Rule counted = Rule.of("r", FixedWindow.of(1, Duration.ofSeconds(10)).withCountRejected(true));
        Rule logged = Rule.of("s", SlidingLog.of(1, Duration.ofSeconds(10)).withCountRejected(true));
        try (RedisStore store = store(clock, prefix()).build()) {
            for (Rule rule : List.of(counted, logged)) {
                assertThat(store.decide(rule, "u", Request.tryAcquire(1)).allowed()).isTrue();
                for (int i = 0; i < 5; i++) {
                    Decision d = store.decide(rule, "u", Request.tryAcquire(1));
                    assertThat(d.allowed()).isFalse();
                    assertThat(d.source()).isEqualTo(Decision.Source.STORE);
                }
            }
            assertThat(((DefaultRedisStore) store).cachedDenials()).isZero();
        }
    }

    @Test
    void aTokenBucketThatStartsBelowCapacityAlwaysAsksRedis() {
        // Such a rule is left out of the cache (the safe side; DenialCache says why). Its first denial creates the
        // bucket, so waiting the retry-after Redis reported opens it.
        ManualClock clock = new ManualClock();
        Rule rule = Rule.of("r", TokenBucket.of(1, 1, Duration.ofSeconds(1)).withInitialTokens(0));
        try (RedisStore store = store(clock, prefix()).build()) {
            Decision first = store.decide(rule, "u", Request.tryAcquire(1));
            assertThat(first.allowed()).isFalse();
            clock.advanceMicros(first.retryAfterMicros() - 1);
            assertThat(store.decide(rule, "u", Request.tryAcquire(1)).source()).isEqualTo(Decision.Source.STORE);
            assertThat(((DefaultRedisStore) store).cachedDenials()).isZero();
            clock.advanceMicros(1);
            assertThat(store.decide(rule, "u", Request.tryAcquire(1)).allowed()).isTrue();
        }
    }

    @Test
    void concurrencyRulesAlwaysAskRedisBecauseAReleaseOpensTheKey() {
        ManualClock clock = new ManualClock();
        Rule rule = Rule.of("c", Concurrency.of(1, Duration.ofSeconds(30)), Gcra.of(100, Duration.ofSeconds(1)));
        try (RedisStore store = store(clock, prefix()).build()) {
            Decision held = store.decide(rule, "u", Request.tryAcquire(1));
            assertThat(store.decide(rule, "u", Request.tryAcquire(1)).allowed()).isFalse();
            assertThat(store.release(rule, "u", held.lease())).isTrue();
            Decision next = store.decide(rule, "u", Request.tryAcquire(1));
            assertThat(next.allowed()).isTrue();
            assertThat(((DefaultRedisStore) store).cachedDenials()).isZero();
        }
    }

    @Test
    void otherModesReservationsAndTheSwitchOffNeverAnswerFromTheCache() {
        ManualClock clock = new ManualClock();
        Rule coalesced = Rule.of("login-coalesced", TokenBucket.of(1, 1, Duration.ofSeconds(1))).withMode(Mode.coalesced());
        try (RedisStore store = store(clock, prefix()).build();
             RedisStore off = store(clock, prefix()).cacheDenials(false).build()) {
            for (int i = 0; i < 3; i++) {
                store.decide(coalesced, "u", Request.tryAcquire(1));
                off.decide(ONE_PER_SECOND, "u", Request.tryAcquire(1));
                store.decide(ONE_PER_SECOND, "v", Request.reserve(1, 1));
                store.decide(ONE_PER_SECOND, "w", Request.tryAcquireAtMost(1));
                store.decide(ONE_PER_SECOND, "x", Request.peek(1));
            }
            assertThat(((DefaultRedisStore) store).cachedDenials()).isZero();
            assertThat(((DefaultRedisStore) off).cachedDenials()).isZero();
        }
    }

    /**
     * The documented limit of the proof: a reset by another store (another process) is not seen here, so this
     * store keeps denying until the retry-after Redis gave, and not one microsecond longer.
     */
    @Test
    void aResetElsewhereIsSeenAtTheCachedDeadlineAtTheLatest() {
        ManualClock clock = new ManualClock();
        String prefix = prefix();
        try (RedisStore here = store(clock, prefix).build(); RedisStore elsewhere = store(clock, prefix).build()) {
            here.decide(ONE_PER_SECOND, "u", Request.tryAcquire(1));
            here.decide(ONE_PER_SECOND, "u", Request.tryAcquire(1));
            elsewhere.reset(ONE_PER_SECOND, "u");
            clock.advanceMicros(999_999);
            assertThat(here.decide(ONE_PER_SECOND, "u", Request.tryAcquire(1)).source())
                    .isEqualTo(Decision.Source.CACHED);
            clock.advanceMicros(1);
            assertThat(here.decide(ONE_PER_SECOND, "u", Request.tryAcquire(1)).allowed()).isTrue();
        }
    }

    // ---------------------------------------------------------------------------------------- bounds

    @Test
    void aFloodOfDistinctDeniedKeysHoldsABoundedNumberOfEntries() {
        ManualClock clock = new ManualClock();
        int keys = 10_000;
        try (RedisStore store = store(clock, prefix()).build()) {
            // Each key: one try admitted, then one denied and recorded; sent asynchronously, for speed.
            for (int round = 0; round < 2; round++) {
                List<java.util.concurrent.CompletableFuture<Decision>> calls = new ArrayList<>(keys);
                for (int i = 0; i < keys; i++) {
                    calls.add(store.decideAsync(ONE_PER_SECOND, "attacker-" + i, Request.tryAcquire(1)));
                }
                boolean allowed = round == 0;
                calls.forEach(c -> assertThat(c.join().allowed()).isEqualTo(allowed));
            }
            int held = ((DefaultRedisStore) store).cachedDenialEntries();
            assertThat(held).isPositive().isLessThanOrEqualTo(8192);
            clock.advanceMicros(1_000_000);
            assertThat(((DefaultRedisStore) store).cachedDenialEntries()).as("entries expire at their deadline")
                    .isZero();
        }
    }

    /**
     * Several stores (processes share one Redis; here several stores in one JVM) hammer one key limited to 10 per
     * second on Redis time: admissions never exceed what the limit allows over the run, the caches answered some
     * denials, and requests still reached Redis after the first burst (admissions past the burst of 10).
     */
    @Test
    void severalStoresOnOneKeyNeverOverAdmit() throws Exception {
        String prefix = prefix();
        Rule rule = Rule.of("login", TokenBucket.of(10, 10, Duration.ofSeconds(1)));
        int stores = 4;
        int threadsPerStore = 4;
        long runNanos = Duration.ofMillis(1500).toNanos();
        List<RedisStore> all = new ArrayList<>();
        AtomicLong admitted = new AtomicLong();
        try {
            for (int i = 0; i < stores; i++) {
                all.add(RedisStore.builder().uri(RedisServer.shared().uri()).prefix(prefix)
                        .timeout(Duration.ofSeconds(10)).build());
            }
            CountDownLatch done = new CountDownLatch(stores * threadsPerStore);
            long start = System.nanoTime();
            for (RedisStore store : all) {
                for (int t = 0; t < threadsPerStore; t++) {
                    Thread thread = new Thread(() -> {
                        try {
                            while (System.nanoTime() - start < runNanos) {
                                if (store.decide(rule, "victim", Request.tryAcquire(1)).allowed()) {
                                    admitted.incrementAndGet();
                                }
                            }
                        } finally {
                            done.countDown();
                        }
                    });
                    thread.setDaemon(true);
                    thread.start();
                }
            }
            done.await();
            long elapsedMicros = (System.nanoTime() - start) / 1_000;
            // Capacity 10, then one token per 100 ms: the most any run of this length can admit.
            long bound = 10 + (elapsedMicros + 99_999) / 100_000;
            long cachedDenials = all.stream().mapToLong(s -> ((DefaultRedisStore) s).cachedDenials()).sum();
            assertThat(admitted.get()).isLessThanOrEqualTo(bound).isGreaterThan(10);
            assertThat(cachedDenials).isPositive();
        } finally {
            all.forEach(RedisStore::close);
        }
    }
}
