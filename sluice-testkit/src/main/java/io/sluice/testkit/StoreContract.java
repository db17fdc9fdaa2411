package io.sluice.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.Concurrency;
import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.Gcra;
import io.sluice.LeakyBucket;
import io.sluice.Limit;
import io.sluice.Lockout;
import io.sluice.RateLimiter;
import io.sluice.RefreshPeriod;
import io.sluice.Request;
import io.sluice.RollingWindow;
import io.sluice.Rule;
import io.sluice.SlidingLog;
import io.sluice.SlidingWindow;
import io.sluice.SmoothBursty;
import io.sluice.SluiceListener;
import io.sluice.SmoothWarmingUp;
import io.sluice.Store;
import io.sluice.TokenBucket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * The contract every {@link Store} passes, unchanged: memory, Redis (standalone and cluster), local-first and
 * remote stores extend this class and supply {@link #newStore}. Time is a {@link ManualClock} the store must
 * use as its time source (a Redis store in client-time mode), so every timeline below is exact.
 *
 * <p>Each test uses a fresh rule name and keys, so stores may be shared between tests. A store that runs rules in
 * another mode (e.g. the Redis store's coalesced, leased or synced modes) overrides {@link #rule} and names the
 * cases its mode cannot satisfy by design in {@link #casesNotApplicable}, with the reason.
 */
public abstract class StoreContract {

    /** A store that reads time from {@code clock}. */
    protected abstract Store newStore(ManualClock clock);

    /** Threads used by the concurrency test. */
    protected int threads() {
        return 16;
    }

    protected ManualClock clock;
    protected Store store;
    private final List<RateLimiter> limiters = new ArrayList<>();

    /**
     * The cases (test method names) this store cannot satisfy by design, each with the reason; they are reported
     * as skipped with that reason. None by default: a store that runs every rule exactly satisfies them all.
     */
    protected Map<String, String> casesNotApplicable() {
        return Map.of();
    }

    @BeforeEach
    void skipCasesNotApplicable(TestInfo test) {
        String reason = casesNotApplicable().get(test.getTestMethod().orElseThrow().getName());
        Assumptions.assumeTrue(reason == null, reason);
    }

    @BeforeEach
    void openStore() {
        clock = new ManualClock();
        store = newStore(clock);
    }

    @AfterEach
    void closeStore() {
        limiters.forEach(RateLimiter::close);
        if (store != null) {    // null when the case was skipped before the store was opened
            store.close();
        }
    }

    /**
     * The rule a test runs: {@code limits} in the default (exact) mode. A store whose modes decide elsewhere
     * (coalesced, leased, synced) overrides this to run the contract in that mode, and names in
     * {@link #casesNotApplicable} the cases its mode cannot satisfy by design.
     */
    protected Rule rule(String name, Limit... limits) {
        return Rule.of(name, limits);
    }

    /** A limiter on the shared store with a rule name no other test uses. */
    protected RateLimiter limiter(Limit... limits) {
        RateLimiter l = RateLimiter.builder(rule("contract-" + UUID.randomUUID(), limits))
                .store(store).sleeper(clock).build();
        limiters.add(l);
        return l;
    }

    private static final long MS = 1_000;
    private static final long S = 1_000_000;

    /**
     * A store timeout for contract runs against a server: the contract's decisions never depend on it, so it is
     * long enough that a loaded machine (the whole suite on two cores) never turns a slow answer into a failure.
     */
    public static final Duration PATIENT_TIMEOUT = Duration.ofSeconds(10);

    // ---------------------------------------------------------------- several targets together

    /*
     * Store.decideTogether: the keys carry one {tag} so that a Redis Cluster can put all their state in one slot;
     * different rule names make the targets different rules. Only several targets are decided here, so a store
     * whose modes decide elsewhere runs these cases exactly as it runs decideTogether.
     */

    /** The cases of {@link Store#decideTogether}, each with {@code reason}: for a store that does not offer it. */
    protected static Map<String, String> togetherCases(String reason) {
        return Map.of("togetherChargesEveryTargetOrNone", reason,
                "togetherOfSeveralKeysOfOneRuleThroughTheLimiter", reason,
                "togetherBestEffortGrantsWhatEveryTargetCan", reason,
                "togetherRefusesRepeatedAndMissingTargets", reason,
                "togetherIsAllOrNothingUnderConcurrency", reason,
                "togetherAsyncDecidesAsTheCallThatWaits", reason);
    }

    private List<Store.Target> targets(Object... ruleKeyPairs) {
        List<Store.Target> out = new ArrayList<>();
        for (int i = 0; i < ruleKeyPairs.length; i += 2) {
            out.add(new Store.Target((Rule) ruleKeyPairs[i], (String) ruleKeyPairs[i + 1]));
        }
        return out;
    }

    @Test
    void togetherChargesEveryTargetOrNone() {
        String id = UUID.randomUUID().toString();
        Rule perUser = rule("together-user-" + id, FixedWindow.of(3, Duration.ofSeconds(10)));
        Rule perTenant = rule("together-tenant-" + id, SlidingLog.of(2, Duration.ofSeconds(10)));
        Request one = Request.tryAcquire(1);
        Decision first = store.decideTogether(targets(perUser, "{t1}u", perTenant, "{t1}t"), one);
        assertThat(first.allowed()).isTrue();
        assertThat(first.granted()).isEqualTo(1);
        assertThat(first.remaining()).isEqualTo(1);          // the tenant's log: 2 - 1, tighter than 3 - 1
        assertThat(first.limit()).isEqualTo("sliding_log");
        assertThat(store.decideTogether(targets(perUser, "{t1}u", perTenant, "{t1}t"), one).allowed()).isTrue();
        Decision rejected = store.decideTogether(targets(perUser, "{t1}u", perTenant, "{t1}t"), one);
        assertThat(rejected.allowed()).isFalse();
        assertThat(rejected.limit()).isEqualTo("sliding_log");
        assertThat(rejected.retryAfterMicros()).isEqualTo(10 * S);
        // The rejection charged the user nothing: one permit is left, and it goes with a fresh tenant.
        Decision last = store.decideTogether(targets(perUser, "{t1}u", perTenant, "{t1}other"), one);
        assertThat(last.allowed()).isTrue();
        assertThat(last.remaining()).isZero();
        assertThat(last.limit()).isEqualTo("fixed_window");
        Decision full = store.decideTogether(targets(perUser, "{t1}u", perTenant, "{t1}third"), one);
        assertThat(full.allowed()).isFalse();
        assertThat(full.limit()).isEqualTo("fixed_window");
        // The fresh tenant was not charged by that rejection either: its 2 permits are both there.
        assertThat(store.decideTogether(targets(perTenant, "{t1}third", perUser, "{t1}v"), Request.tryAcquire(2))
                .allowed()).isTrue();
    }

    @Test
    void togetherOfSeveralKeysOfOneRuleThroughTheLimiter() {
        RateLimiter l = limiter(TokenBucket.of(5, 1, Duration.ofSeconds(1)));
        assertThat(l.tryAcquireAll(List.of("{t2}a", "{t2}b"), 4).allowed()).isTrue();
        Decision rejected = l.tryAcquireAll(List.of("{t2}c", "{t2}a"), 2);
        assertThat(rejected.allowed()).isFalse();
        assertThat(rejected.retryAfterMicros()).isEqualTo(1 * S);
        // c was not charged: 5 are there for it with a key that has 5 too.
        assertThat(l.tryAcquireAll(List.of("{t2}c", "{t2}d"), 5).allowed()).isTrue();
        clock.advanceMillis(1000);
        Decision refilled = l.tryAcquireAll(List.of("{t2}a", "{t2}b"), 2);
        assertThat(refilled.allowed()).isTrue();
        assertThat(refilled.remaining()).isZero();
    }

    @Test
    void togetherBestEffortGrantsWhatEveryTargetCan() {
        String id = UUID.randomUUID().toString();
        Rule small = rule("together-small-" + id, FixedWindow.of(3, Duration.ofSeconds(10)));
        Rule large = rule("together-large-" + id, FixedWindow.of(10, Duration.ofSeconds(10)));
        Decision d = store.decideTogether(targets(small, "{t3}k", large, "{t3}k"), Request.tryAcquireAtMost(5));
        assertThat(d.allowed()).isTrue();
        assertThat(d.granted()).isEqualTo(3);
        // Both were charged 3: the large rule has 7 left.
        Decision rest = store.decideTogether(targets(large, "{t3}k", small, "{t3}fresh"), Request.tryAcquire(3));
        assertThat(rest.allowed()).isTrue();
        assertThat(store.decideTogether(targets(large, "{t3}k", large, "{t3}other"), Request.tryAcquire(5))
                .allowed()).isFalse();
        assertThat(store.decideTogether(targets(large, "{t3}k", small, "{t3}fresh3"), Request.tryAcquire(3))
                .allowed()).isTrue();
    }

    @Test
    void togetherRefusesRepeatedAndMissingTargets() {
        Rule r = rule("together-bad-" + UUID.randomUUID(), FixedWindow.of(3, Duration.ofSeconds(1)));
        assertThatThrownBy(() -> store.decideTogether(targets(r, "{t4}a", r, "{t4}a"), Request.tryAcquire(1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("appears twice");
        assertThatThrownBy(() -> store.decideTogether(List.of(), Request.tryAcquire(1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("targets");
        assertThatThrownBy(() -> store.decideTogether(targets(r, "{t4}a", r, "{t4}b"), Request.tryAcquire(4)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("permits");
    }

    @Test
    void togetherAsyncDecidesAsTheCallThatWaits() throws Exception {
        RateLimiter l = limiter(SlidingLog.of(2, Duration.ofSeconds(10)));
        Decision both = l.tryAcquireAllAsync(List.of("{t6}a", "{t6}b"), 2).get(30, TimeUnit.SECONDS);
        assertThat(both.allowed()).isTrue();
        assertThat(both.remaining()).isZero();
        Decision rejected = l.tryAcquireAllAsync(List.of("{t6}c", "{t6}a"), 1).get(30, TimeUnit.SECONDS);
        assertThat(rejected.allowed()).isFalse();
        assertThat(rejected.retryAfterMicros()).isEqualTo(10 * S);
        // c was not charged: both its permits are there, through the store's own async call.
        Rule r = l.rule();
        assertThat(store.decideTogetherAsync(targets(r, "{t6}c", r, "{t6}d"), Request.tryAcquire(2))
                .get(30, TimeUnit.SECONDS).allowed()).isTrue();
        // A bad list throws before anything is sent, as the call that waits does.
        assertThatThrownBy(() -> l.tryAcquireAllAsync(List.of("{t6}e", "{t6}e"), 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("appears twice");
        assertThatThrownBy(() -> l.tryAcquireAllAsync(List.of("{t6}e", "{t6}f"), 3))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("permits");
    }

    @Test
    void togetherIsAllOrNothingUnderConcurrency() throws Exception {
        // Threads take one permit from a shared key together with a key of their own; the shared key admits 10
        // in the window, so exactly 10 calls pass, and exactly those charged their own key.
        RateLimiter l = limiter(FixedWindow.of(10, Duration.ofSeconds(100)));
        int n = threads() * 4;
        ExecutorService pool = Executors.newFixedThreadPool(threads());
        try {
            List<Future<Boolean>> results = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                String own = "{t5}own" + i;
                results.add(pool.submit(() -> l.tryAcquireAll(List.of("{t5}shared", own), 1).allowed()));
            }
            int admitted = 0;
            List<Integer> winners = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                if (results.get(i).get(30, TimeUnit.SECONDS)) {
                    admitted++;
                    winners.add(i);
                }
            }
            assertThat(admitted).isEqualTo(10);
            for (int i = 0; i < n; i++) {
                long expected = winners.contains(i) ? 9 : 10;
                // Each own key is asked for all it has left together with a fresh key: only what it holds passes.
                assertThat(l.tryAcquireAll(List.of("{t5}own" + i, "{t5}probe" + i), expected).allowed()).isTrue();
                assertThat(l.tryAcquireAll(List.of("{t5}own" + i, "{t5}probe2-" + i), 1).allowed()).isFalse();
            }
        } finally {
            pool.shutdownNow();
        }
    }

    // ---------------------------------------------------------------- fixed_window

    @Test
    void fixedWindowAdmitsLimitPerEpochAlignedWindow() {
        RateLimiter l = limiter(FixedWindow.of(3, Duration.ofSeconds(1)));
        assertThat(l.tryAcquire("k").remaining()).isEqualTo(2);
        assertThat(l.tryAcquire("k").remaining()).isEqualTo(1);
        assertThat(l.tryAcquire("k").remaining()).isEqualTo(0);
        clock.advanceMillis(250);
        Decision rejected = l.tryAcquire("k");
        assertThat(rejected.allowed()).isFalse();
        assertThat(rejected.retryAfterMicros()).isEqualTo(750 * MS);
        assertThat(rejected.limit()).isEqualTo("fixed_window");
        clock.advanceMillis(750);
        assertThat(l.tryAcquire("k").allowed()).isTrue();
    }

    @Test
    void fixedWindowAllowsDoubleBurstAcrossBoundary() {
        RateLimiter l = limiter(FixedWindow.of(3, Duration.ofSeconds(1)));
        clock.advanceMillis(999);
        assertThat(l.tryAcquire("k", 3).allowed()).isTrue();
        clock.advanceMillis(1);
        assertThat(l.tryAcquire("k", 3).allowed()).isTrue();
    }

    // ---------------------------------------------------------------- sliding_log

    @Test
    void slidingLogIsExactInEveryWindowAndKeepsSameMicrosecondEvents() {
        RateLimiter l = limiter(SlidingLog.of(3, Duration.ofSeconds(1)));
        assertThat(l.tryAcquire("k").allowed()).isTrue();
        assertThat(l.tryAcquire("k").allowed()).isTrue();
        assertThat(l.tryAcquire("k").allowed()).isTrue();
        clock.advanceMillis(300);
        Decision d = l.tryAcquire("k");
        assertThat(d.allowed()).isFalse();
        assertThat(d.retryAfterMicros()).isEqualTo(700 * MS);
        clock.advanceMillis(699);
        assertThat(l.tryAcquire("k").allowed()).isFalse();
        clock.advanceMillis(1);
        assertThat(l.tryAcquire("k", 3).allowed()).isTrue();
    }

    // ---------------------------------------------------------------- sliding_window

    @Test
    void slidingWindowWeighsThePreviousWindow() {
        RateLimiter l = limiter(SlidingWindow.of(10, Duration.ofSeconds(1)));
        assertThat(l.tryAcquire("k", 10).allowed()).isTrue();
        assertThat(l.tryAcquire("k").allowed()).isFalse();
        clock.advanceMillis(1500);
        // previous = 10 weighted by half: 5 are counted, 5 remain.
        assertThat(l.tryAcquire("k", 5).allowed()).isTrue();
        assertThat(l.tryAcquire("k").allowed()).isFalse();
    }

    // ---------------------------------------------------------------- rolling_window

    @Test
    void rollingWindowGrantsWhatIsLeftBestEffort() {
        RateLimiter l = limiter(RollingWindow.of(10, Duration.ofSeconds(1), Duration.ofMillis(100)));
        assertThat(l.tryAcquire("k", 4).allowed()).isTrue();
        Decision partial = l.tryAcquireAtMost("k", 15);
        assertThat(partial.allowed()).isTrue();
        assertThat(partial.granted()).isEqualTo(6);
        assertThat(partial.remaining()).isEqualTo(0);
        Decision none = l.tryAcquireAtMost("k", 1);
        assertThat(none.allowed()).isFalse();
        assertThat(none.granted()).isZero();
        clock.advanceMillis(1200);
        assertThat(l.tryAcquire("k", 10).allowed()).isTrue();
    }

    // ---------------------------------------------------------------- token_bucket

    @Test
    void tokenBucketRefillsGreedilyAndReserves() {
        RateLimiter l = limiter(TokenBucket.of(10, 10, Duration.ofSeconds(1)));
        assertThat(l.tryAcquire("k", 10).remaining()).isZero();
        Decision d = l.tryAcquire("k");
        assertThat(d.allowed()).isFalse();
        assertThat(d.retryAfterMicros()).isEqualTo(100 * MS);
        clock.advanceMillis(100);
        assertThat(l.tryAcquire("k").allowed()).isTrue();
        Decision r = l.reserve("k", 5, Duration.ofSeconds(1));
        assertThat(r.allowed()).isTrue();
        assertThat(r.waitMicros()).isEqualTo(500 * MS);
        assertThat(l.reserve("k", 10, Duration.ofSeconds(1)).allowed()).isFalse();
    }

    // ---------------------------------------------------------------- gcra

    @Test
    void gcraReportsRedisRateValues() {
        RateLimiter l = limiter(Gcra.of(10, Duration.ofSeconds(1)));
        Decision first = l.tryAcquire("k");
        assertThat(first.remaining()).isEqualTo(9);
        assertThat(first.resetAfterMicros()).isEqualTo(100 * MS);
        assertThat(l.tryAcquire("k", 9).remaining()).isZero();
        Decision rejected = l.tryAcquire("k");
        assertThat(rejected.allowed()).isFalse();
        assertThat(rejected.retryAfterMicros()).isEqualTo(100 * MS);
        assertThat(rejected.resetAfterMicros()).isEqualTo(S);
        clock.advanceMillis(100);
        assertThat(l.tryAcquire("k").allowed()).isTrue();
    }

    // ---------------------------------------------------------------- leaky_bucket

    @Test
    void leakyBucketDelaysTheBurstThenRejects() throws InterruptedException {
        RateLimiter l = limiter(LeakyBucket.of(1, Duration.ofSeconds(1)).withBurst(5));
        List<Long> waits = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            Decision d = l.reserve("k", 1, Duration.ofDays(1));
            assertThat(d.allowed()).isTrue();
            waits.add(d.waitMicros());
        }
        assertThat(waits).containsExactly(0L, S, 2 * S, 3 * S, 4 * S, 5 * S);
        assertThat(l.reserve("k", 1, Duration.ofDays(1)).allowed()).isFalse();
        assertThat(l.tryAcquire("other").allowed()).isTrue();
        assertThat(l.tryAcquire("other").allowed()).isFalse();
    }

    @Test
    void leakyBucketNodelayPassesTheBurstAtOnce() {
        RateLimiter l = limiter(LeakyBucket.of(1, Duration.ofSeconds(1)).withBurst(5).withNodelay(true));
        for (int i = 0; i < 6; i++) {
            Decision d = l.tryAcquire("k");
            assertThat(d.allowed()).isTrue();
            assertThat(d.waitMicros()).isZero();
        }
        assertThat(l.tryAcquire("k").allowed()).isFalse();
    }

    // ---------------------------------------------------------------- smooth (Guava)

    @Test
    void smoothBurstyMatchesGuavaTestSimple() throws InterruptedException {
        RateLimiter l = limiter(SmoothBursty.of(5.0));
        // A key without state is idle with its burst saved: the 5 saved permits and one fresh at once, as an
        // idle Guava limiter; then Guava's testSimple, each request paying for the previous one.
        l.acquire("k", 6, Duration.ofDays(1));
        l.acquire("k", 1, Duration.ofDays(1));
        l.acquire("k", 1, Duration.ofDays(1));
        l.acquire("k", 1, Duration.ofDays(1));
        assertThat(clock.takeSleeps()).containsExactly(0L, 200 * MS, 200 * MS, 200 * MS);
    }

    @Test
    void smoothWarmingUpMatchesGuavaTestWarmUp() throws InterruptedException {
        RateLimiter l = limiter(SmoothWarmingUp.of(2.0, Duration.ofMillis(4000)));
        for (int i = 0; i < 8; i++) {
            l.acquire("k", 1, Duration.ofDays(1));
        }
        // Guava RateLimiterTest.testWarmUp: R0.00, R1.38, R1.13, R0.88, R0.63, R0.50, R0.50, R0.50
        assertThat(clock.takeSleeps().stream().map(us -> Math.round(us / 10_000.0) / 100.0))
                .containsExactly(0.0, 1.38, 1.13, 0.88, 0.63, 0.5, 0.5, 0.5);
    }

    // ---------------------------------------------------------------- refresh_period (Resilience4j)

    @Test
    void refreshPeriodReservesPermitsOfTheNextCycle() {
        RateLimiter l = limiter(RefreshPeriod.of(2, Duration.ofSeconds(1)));
        assertThat(l.tryAcquire("k").allowed()).isTrue();
        clock.advanceMillis(400);
        assertThat(l.tryAcquire("k").allowed()).isTrue();
        Decision rejected = l.tryAcquire("k");
        assertThat(rejected.allowed()).isFalse();
        assertThat(rejected.retryAfterMicros()).isEqualTo(600 * MS);
        Decision reserved = l.reserve("k", 1, Duration.ofSeconds(1));
        assertThat(reserved.allowed()).isTrue();
        assertThat(reserved.waitMicros()).isEqualTo(600 * MS);
        clock.advanceMillis(600);
        assertThat(l.tryAcquire("k").allowed()).isTrue();
        assertThat(l.tryAcquire("k").allowed()).isFalse();
    }

    // ---------------------------------------------------------------- concurrency

    @Test
    void concurrencyLeasesAreReleasedOrExpire() {
        RateLimiter l = limiter(Concurrency.of(2, Duration.ofSeconds(10)));
        Decision a = l.tryAcquire("k");
        Decision b = l.tryAcquire("k");
        assertThat(a.lease()).isNotEqualTo(Decision.NO_LEASE).isNotEqualTo(b.lease());
        Decision full = l.tryAcquire("k");
        assertThat(full.allowed()).isFalse();
        assertThat(full.retryAfterMicros()).isEqualTo(10 * S);
        assertThat(l.release("k", a.lease())).isTrue();
        assertThat(l.release("k", a.lease())).isFalse();
        Decision c = l.tryAcquire("k");
        assertThat(c.allowed()).isTrue();
        clock.advance(Duration.ofSeconds(10));
        assertThat(l.release("k", b.lease())).isFalse();
        assertThat(l.tryAcquire("k", 2).allowed()).isTrue();
    }

    // ---------------------------------------------------------------- rules of several limits

    @Test
    void aRejectedRequestChargesNoLimit() {
        RateLimiter l = limiter(FixedWindow.of(5, Duration.ofMinutes(1)),
                TokenBucket.of(3, 1, Duration.ofSeconds(10)));
        assertThat(l.tryAcquire("k", 3).allowed()).isTrue();
        for (int i = 0; i < 10; i++) {
            Decision d = l.tryAcquire("k");
            assertThat(d.allowed()).isFalse();
            assertThat(d.limit()).isEqualTo("token_bucket");
        }
        clock.advance(Duration.ofSeconds(10));
        assertThat(l.tryAcquire("k").allowed()).isTrue();
        clock.advance(Duration.ofSeconds(10));
        Decision fifth = l.tryAcquire("k");
        assertThat(fifth.allowed()).isTrue();
        assertThat(fifth.remaining()).isZero();
        assertThat(fifth.limit()).isEqualTo("fixed_window");
        clock.advance(Duration.ofSeconds(10));
        Decision sixth = l.tryAcquire("k");
        assertThat(sixth.allowed()).isFalse();
        assertThat(sixth.limit()).isEqualTo("fixed_window");
    }

    // ---------------------------------------------------------------- lockouts

    @Test
    void aLockoutRejectsEverythingUntilItEndsAndResetLiftsIt() {
        Rule rule = Rule.of("contract-" + UUID.randomUUID(), FixedWindow.of(2, Duration.ofMinutes(1)))
                .withLockout(Lockout.of(2, Duration.ofMinutes(5), Duration.ofHours(1)));
        RateLimiter l = RateLimiter.builder(rule).store(store).sleeper(clock).build();
        limiters.add(l);
        clock.setMicros(clock.nowMicros() / (60 * S) * (60 * S));   // the start of a minute
        assertThat(l.tryAcquire("k", 2).allowed()).isTrue();
        Decision first = l.tryAcquire("k");
        assertThat(first.lockedOut()).isFalse();
        assertThat(first.limit()).isEqualTo("fixed_window");
        clock.advance(Duration.ofSeconds(1));
        Decision second = l.tryAcquire("k");
        assertThat(second.lockedOut()).as("the second rejection within 5 minutes").isTrue();
        assertThat(second.limit()).isEqualTo(Lockout.NAME);
        assertThat(second.retryAfterMicros()).isEqualTo(3_600 * S);
        clock.advance(Duration.ofMinutes(2));
        Decision during = l.tryAcquire("k");
        assertThat(during.lockedOut()).as("a new minute, still locked out").isTrue();
        assertThat(during.retryAfterMicros()).isEqualTo(3_480 * S);
        assertThat(l.peek("k", 1).lockedOut()).isTrue();
        l.reset("k");
        assertThat(l.tryAcquire("k", 2).allowed()).isTrue();
        assertThat(l.tryAcquire("k").lockedOut()).as("the count was cleared").isFalse();
    }

    // ---------------------------------------------------------------- shadow limits

    /** A limiter like {@link #limiter} in which the limits named {@code shadow} are shadow limits. */
    protected RateLimiter shadowLimiter(List<String> shadow, Limit... limits) {
        Rule rule = Rule.of("contract-" + UUID.randomUUID(), limits).withShadow(shadow.toArray(String[]::new));
        RateLimiter l = RateLimiter.builder(rule).store(store).sleeper(clock).build();
        limiters.add(l);
        return l;
    }

    @Test
    void aShadowLimitCountsWhatItWouldAdmitButNeverRejects() {
        RateLimiter l = shadowLimiter(List.of("watch"), FixedWindow.of(3, Duration.ofHours(1)).named("enforce"),
                TokenBucket.of(2, 1, Duration.ofSeconds(10)).named("watch"));
        for (int i = 0; i < 2; i++) {
            Decision d = l.tryAcquire("k");
            assertThat(d.allowed()).isTrue();
            assertThat(d.shadowRejected()).isFalse();
        }
        Decision third = l.tryAcquire("k");
        assertThat(third.allowed()).as("the shadow limit would reject, the enforced one admits").isTrue();
        assertThat(third.shadowLimit()).isEqualTo("watch");
        assertThat(third.shadowRetryAfterMicros()).isEqualTo(10 * S);
        assertThat(third.limit()).as("the enforced limit reports").isEqualTo("enforce");
        assertThat(third.remaining()).isZero();
        Decision fourth = l.tryAcquire("k");
        assertThat(fourth.allowed()).isFalse();
        assertThat(fourth.limit()).isEqualTo("enforce");
        assertThat(fourth.shadowLimit()).isEqualTo("watch");
        clock.advance(Duration.ofSeconds(10));
        // a token came back; a request the enforced limit rejects charges the shadow limit nothing either
        Decision fifth = l.tryAcquire("k");
        assertThat(fifth.allowed()).isFalse();
        assertThat(fifth.shadowRejected()).isFalse();
        assertThat(l.peek("k", 1).shadowRejected()).isFalse();
        assertThat(l.peek("k", 2).shadowLimit()).isEqualTo("watch");
    }

    @Test
    void aRuleOfShadowLimitsAdmitsEverythingAndSaysWhatItWouldHaveDone() {
        RateLimiter l = shadowLimiter(List.of("token_bucket"), TokenBucket.of(2, 1, Duration.ofSeconds(10)));
        Decision first = l.tryAcquire("k", 2);
        assertThat(first.allowed()).isTrue();
        assertThat(first.shadowRejected()).isFalse();
        assertThat(first.remaining()).isZero();
        Decision over = l.tryAcquire("k");
        assertThat(over.allowed()).isTrue();
        assertThat(over.granted()).isEqualTo(1);
        assertThat(over.shadowLimit()).isEqualTo("token_bucket");
        assertThat(over.shadowRetryAfterMicros()).isEqualTo(10 * S);
        Decision reserved = l.reserve("k", 1, Duration.ofMinutes(1));
        assertThat(reserved.allowed()).isTrue();
        assertThat(reserved.waitMicros()).as("a shadow limit never makes a caller wait").isZero();
        clock.advance(Duration.ofSeconds(10));
        // the reservation the shadow bucket would have granted took the refilled token
        assertThat(l.tryAcquire("k").shadowRetryAfterMicros()).isEqualTo(10 * S);
    }

    @Test
    void bestEffortGrantsTheSmallestAmountEveryLimitAllows() {
        RateLimiter l = limiter(FixedWindow.of(8, Duration.ofMinutes(1)),
                TokenBucket.of(5, 1, Duration.ofSeconds(1)));
        Decision d = l.tryAcquireAtMost("k", 7);
        assertThat(d.granted()).isEqualTo(5);
        assertThat(d.remaining()).isZero();
        clock.advance(Duration.ofSeconds(10));
        Decision e = l.tryAcquireAtMost("k", 7);
        assertThat(e.granted()).isEqualTo(3);
        assertThat(e.limit()).isEqualTo("fixed_window");
    }

    @Test
    void peekChargesNothing() {
        RateLimiter l = limiter(FixedWindow.of(2, Duration.ofMinutes(1)));
        assertThat(l.peek("k", 0).remaining()).isEqualTo(2);
        Decision p = l.peek("k", 2);
        assertThat(p.allowed()).isTrue();
        assertThat(p.granted()).isZero();
        assertThat(l.tryAcquire("k", 2).allowed()).isTrue();
        assertThat(l.peek("k", 1).allowed()).isFalse();
        assertThat(l.peek("k", 0).remaining()).isZero();
    }

    @Test
    void keysAndRulesAreIsolated() {
        RateLimiter a = limiter(FixedWindow.of(1, Duration.ofMinutes(1)));
        RateLimiter b = limiter(FixedWindow.of(1, Duration.ofMinutes(1)));
        assertThat(a.tryAcquire("k").allowed()).isTrue();
        assertThat(a.tryAcquire("k2").allowed()).isTrue();
        assertThat(b.tryAcquire("k").allowed()).isTrue();
        assertThat(a.tryAcquire("k").allowed()).isFalse();
    }

    @Test
    void resetForgetsTheKey() {
        RateLimiter l = limiter(FixedWindow.of(1, Duration.ofMinutes(1)), SlidingLog.of(1, Duration.ofMinutes(1)));
        assertThat(l.tryAcquire("k").allowed()).isTrue();
        assertThat(l.tryAcquire("k").allowed()).isFalse();
        l.reset("k");
        assertThat(l.tryAcquire("k").allowed()).isTrue();
    }

    @Test
    void acquireWaitsForWindowsByPollingAndFailsFastBeyondMaxWait() throws InterruptedException {
        RateLimiter l = limiter(FixedWindow.of(1, Duration.ofSeconds(1)));
        assertThat(l.acquire("k", 1, Duration.ZERO).allowed()).isTrue();
        Decision tooLong = l.acquire("k", 1, Duration.ofMillis(999));
        assertThat(tooLong.allowed()).isFalse();
        assertThat(clock.takeSleeps()).containsExactly(0L);
        Decision waited = l.acquire("k", 1, Duration.ofSeconds(1));
        assertThat(waited.allowed()).isTrue();
        assertThat(clock.takeSleeps()).containsExactly(S, 0L);
    }

    @Test
    void acquireReservesNothingWhenTheWaitIsTooLong() throws InterruptedException {
        RateLimiter l = limiter(TokenBucket.of(1, 1, Duration.ofSeconds(1)));
        assertThat(l.tryAcquire("k").allowed()).isTrue();
        assertThat(l.acquire("k", 1, Duration.ofMillis(500)).allowed()).isFalse();
        clock.advanceMillis(1000);
        assertThat(l.tryAcquire("k").allowed()).isTrue();
    }

    @Test
    void updateLimitKeepsStateAsDocumented() {
        RateLimiter l = limiter(TokenBucket.of(10, 1, Duration.ofSeconds(1)));
        assertThat(l.tryAcquire("k", 10).allowed()).isTrue();
        l.updateLimit(TokenBucket.of(20, 1, Duration.ofSeconds(1)));
        assertThat(l.tryAcquire("k").allowed()).isFalse();
        clock.advanceMillis(1000);
        assertThat(l.tryAcquire("k").allowed()).isTrue();
        RateLimiter f = limiter(FixedWindow.of(2, Duration.ofMinutes(1)));
        assertThat(f.tryAcquire("k", 2).allowed()).isTrue();
        f.updateLimit(FixedWindow.of(3, Duration.ofMinutes(1)));
        assertThat(f.tryAcquire("k").remaining()).isZero();
        assertThatThrownBy(() -> f.updateLimit(FixedWindow.of(3, Duration.ofMinutes(1)).named("nope")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("limit");
    }

    @Test
    void asyncVariantsDecideLikeTheSyncOnes() throws Exception {
        RateLimiter l = limiter(FixedWindow.of(2, Duration.ofMinutes(1)), Concurrency.of(5, Duration.ofSeconds(5)));
        Decision a = l.tryAcquireAsync("k", 1).get(5, TimeUnit.SECONDS);
        assertThat(a.allowed()).isTrue();
        assertThat(l.peekAsync("k", 1).get(5, TimeUnit.SECONDS).allowed()).isTrue();
        assertThat(l.tryAcquireAtMostAsync("k", 5).get(5, TimeUnit.SECONDS).granted()).isEqualTo(1);
        assertThat(l.reserveAsync("k", 1, Duration.ZERO).get(5, TimeUnit.SECONDS).allowed()).isFalse();
        assertThat(l.releaseAsync("k", a.lease()).get(5, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<Decision> acquired = l.acquireAsync("other", 1, Duration.ZERO);
        assertThat(acquired.get(5, TimeUnit.SECONDS).allowed()).isTrue();
    }

    @Test
    void invalidRequestsFailBeforeAnythingIsCharged() {
        RateLimiter l = limiter(FixedWindow.of(2, Duration.ofMinutes(1)));
        assertThatThrownBy(() -> l.tryAcquire("k", 3)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("permits").hasMessageContaining("[1, 2]");
        assertThatThrownBy(() -> l.tryAcquire("k", 0)).hasMessageContaining("permits");
        assertThatThrownBy(() -> l.tryAcquire("", 1)).hasMessageContaining("key");
        assertThatThrownBy(() -> l.tryAcquire(null, 1)).hasMessageContaining("key");
        assertThatThrownBy(() -> l.tryAcquire("x".repeat(513), 1)).hasMessageContaining("key");
        assertThatThrownBy(() -> l.reserve("k", 1, Duration.ofSeconds(-1))).hasMessageContaining("maxWait");
        assertThat(l.tryAcquire("k", 2).allowed()).isTrue();
    }

    // ---------------------------------------------------------------- events

    /** One decision as a listener heard it. */
    private record Heard(String rule, String key, boolean allowed, String limit) {}

    @Test
    void listenersHearEachDecisionWithItsKey() throws Exception {
        List<Heard> heard = java.util.Collections.synchronizedList(new ArrayList<>());
        SluiceListener audit = new SluiceListener() {
            @Override
            public void onDecision(Rule rule, String key, Decision decision) {
                heard.add(new Heard(rule.name(), key, decision.allowed(), decision.limit()));
            }
        };
        Rule rule = Rule.of("contract-" + UUID.randomUUID(), FixedWindow.of(1, Duration.ofMinutes(1)));
        String tenant = "tenant:\u00e9t\u00e9/\ud83d\ude00 7";
        try (RateLimiter l = RateLimiter.builder(rule).store(store).sleeper(clock).listener(audit).build()) {
            assertThat(l.tryAcquire("user:1").allowed()).isTrue();
            assertThat(l.tryAcquire("user:1").allowed()).isFalse();
            assertThat(l.tryAcquireAsync(tenant, 1).get(5, TimeUnit.SECONDS).allowed()).isTrue();
            assertThat(l.peek("user:2", 1).allowed()).isTrue();
            l.reset("user:1");
        }
        assertThat(heard).containsExactly(
                new Heard(rule.name(), "user:1", true, "fixed_window"),
                new Heard(rule.name(), "user:1", false, "fixed_window"),
                new Heard(rule.name(), tenant, true, "fixed_window"),
                new Heard(rule.name(), "user:2", true, "fixed_window"));
    }

    // ---------------------------------------------------------------- concurrency of callers

    @Test
    void manyThreadsOnOneKeyAdmitExactlyTheLimit() throws Exception {
        RateLimiter l = limiter(FixedWindow.of(1000, Duration.ofHours(1)), SlidingLog.of(1500, Duration.ofHours(1)),
                TokenBucket.of(2000, 1, Duration.ofHours(1)));
        int n = threads();
        ExecutorService pool = Executors.newFixedThreadPool(n);
        CountDownLatch start = new CountDownLatch(1);
        try {
            List<Future<Integer>> results = new ArrayList<>();
            for (int t = 0; t < n; t++) {
                results.add(pool.submit(() -> {
                    start.await();
                    int admitted = 0;
                    for (int i = 0; i < 150; i++) {
                        if (l.tryAcquire("hot").allowed()) {
                            admitted++;
                        }
                    }
                    return admitted;
                }));
            }
            start.countDown();
            int total = 0;
            for (Future<Integer> f : results) {
                total += f.get(60, TimeUnit.SECONDS);
            }
            assertThat(total).isEqualTo(1000);
        } finally {
            pool.shutdownNow();
        }
    }
}
