package io.sluice.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.RateLimiter;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.SlidingLog;
import io.sluice.Store;
import io.sluice.TokenBucket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The contract cases of {@link Store#decideTogether}: several targets charged all or nothing. */
public interface TogetherCases extends ContractFixture {

    // ---------------------------------------------------------------- several targets together

    /*
     * Store.decideTogether: the keys carry one {tag} so that a Redis Cluster can put all their state in one slot;
     * different rule names make the targets different rules. Only several targets are decided here, so a store
     * whose modes decide elsewhere runs these cases exactly as it runs decideTogether.
     */

    private List<Store.Target> targets(Object... ruleKeyPairs) {
        List<Store.Target> out = new ArrayList<>();
        for (int i = 0; i < ruleKeyPairs.length; i += 2) {
            out.add(new Store.Target((Rule) ruleKeyPairs[i], (String) ruleKeyPairs[i + 1]));
        }
        return out;
    }

    @Test
    default void togetherChargesEveryTargetOrNone() {
        String id = UUID.randomUUID().toString();
        Rule perUser = ruleUnderTest("together-user-" + id, FixedWindow.of(3, Duration.ofSeconds(10)));
        Rule perTenant = ruleUnderTest("together-tenant-" + id, SlidingLog.of(2, Duration.ofSeconds(10)));
        Request one = Request.tryAcquire(1);
        Decision first = store().decideTogether(targets(perUser, "{t1}u", perTenant, "{t1}t"), one);
        assertThat(first.allowed()).isTrue();
        assertThat(first.granted()).isEqualTo(1);
        assertThat(first.remaining()).isEqualTo(1);          // the tenant's log: 2 - 1, tighter than 3 - 1
        assertThat(first.limit()).isEqualTo("sliding_log");
        assertThat(store().decideTogether(targets(perUser, "{t1}u", perTenant, "{t1}t"), one).allowed()).isTrue();
        Decision rejected = store().decideTogether(targets(perUser, "{t1}u", perTenant, "{t1}t"), one);
        assertThat(rejected.allowed()).isFalse();
        assertThat(rejected.limit()).isEqualTo("sliding_log");
        assertThat(rejected.retryAfterMicros()).isEqualTo(10 * S);
        // The rejection charged the user nothing: one permit is left, and it goes with a fresh tenant.
        Decision last = store().decideTogether(targets(perUser, "{t1}u", perTenant, "{t1}other"), one);
        assertThat(last.allowed()).isTrue();
        assertThat(last.remaining()).isZero();
        assertThat(last.limit()).isEqualTo("fixed_window");
        Decision full = store().decideTogether(targets(perUser, "{t1}u", perTenant, "{t1}third"), one);
        assertThat(full.allowed()).isFalse();
        assertThat(full.limit()).isEqualTo("fixed_window");
        // The fresh tenant was not charged by that rejection either: its 2 permits are both there.
        assertThat(store().decideTogether(targets(perTenant, "{t1}third", perUser, "{t1}v"), Request.tryAcquire(2))
                .allowed()).isTrue();
    }

    @Test
    default void togetherOfSeveralKeysOfOneRuleThroughTheLimiter() {
        RateLimiter l = limiter(TokenBucket.of(5, 1, Duration.ofSeconds(1)));
        assertThat(l.tryAcquireAll(List.of("{t2}a", "{t2}b"), 4).allowed()).isTrue();
        Decision rejected = l.tryAcquireAll(List.of("{t2}c", "{t2}a"), 2);
        assertThat(rejected.allowed()).isFalse();
        assertThat(rejected.retryAfterMicros()).isEqualTo(1 * S);
        // c was not charged: 5 are there for it with a key that has 5 too.
        assertThat(l.tryAcquireAll(List.of("{t2}c", "{t2}d"), 5).allowed()).isTrue();
        clock().advanceMillis(1000);
        Decision refilled = l.tryAcquireAll(List.of("{t2}a", "{t2}b"), 2);
        assertThat(refilled.allowed()).isTrue();
        assertThat(refilled.remaining()).isZero();
    }

    @Test
    default void togetherBestEffortGrantsWhatEveryTargetCan() {
        String id = UUID.randomUUID().toString();
        Rule small = ruleUnderTest("together-small-" + id, FixedWindow.of(3, Duration.ofSeconds(10)));
        Rule large = ruleUnderTest("together-large-" + id, FixedWindow.of(10, Duration.ofSeconds(10)));
        Decision d = store().decideTogether(targets(small, "{t3}k", large, "{t3}k"), Request.tryAcquireAtMost(5));
        assertThat(d.allowed()).isTrue();
        assertThat(d.granted()).isEqualTo(3);
        // Both were charged 3: the large rule has 7 left.
        Decision rest = store().decideTogether(targets(large, "{t3}k", small, "{t3}fresh"), Request.tryAcquire(3));
        assertThat(rest.allowed()).isTrue();
        assertThat(store().decideTogether(targets(large, "{t3}k", large, "{t3}other"), Request.tryAcquire(5))
                .allowed()).isFalse();
        assertThat(store().decideTogether(targets(large, "{t3}k", small, "{t3}fresh3"), Request.tryAcquire(3))
                .allowed()).isTrue();
    }

    @Test
    default void togetherRefusesRepeatedAndMissingTargets() {
        Rule r = ruleUnderTest("together-bad-" + UUID.randomUUID(), FixedWindow.of(3, Duration.ofSeconds(1)));
        assertThatThrownBy(() -> store().decideTogether(targets(r, "{t4}a", r, "{t4}a"), Request.tryAcquire(1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("appears twice");
        assertThatThrownBy(() -> store().decideTogether(List.of(), Request.tryAcquire(1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("targets");
        assertThatThrownBy(() -> store().decideTogether(targets(r, "{t4}a", r, "{t4}b"), Request.tryAcquire(4)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("permits");
    }

    @Test
    default void togetherAsyncDecidesAsTheCallThatWaits() throws Exception {
        RateLimiter l = limiter(SlidingLog.of(2, Duration.ofSeconds(10)));
        Decision both = l.tryAcquireAllAsync(List.of("{t6}a", "{t6}b"), 2).get(30, TimeUnit.SECONDS);
        assertThat(both.allowed()).isTrue();
        assertThat(both.remaining()).isZero();
        Decision rejected = l.tryAcquireAllAsync(List.of("{t6}c", "{t6}a"), 1).get(30, TimeUnit.SECONDS);
        assertThat(rejected.allowed()).isFalse();
        assertThat(rejected.retryAfterMicros()).isEqualTo(10 * S);
        // c was not charged: both its permits are there, through the store's own async call.
        Rule r = l.rule();
        assertThat(store().decideTogetherAsync(targets(r, "{t6}c", r, "{t6}d"), Request.tryAcquire(2))
                .get(30, TimeUnit.SECONDS).allowed()).isTrue();
        // A bad list throws before anything is sent, as the call that waits does.
        assertThatThrownBy(() -> l.tryAcquireAllAsync(List.of("{t6}e", "{t6}e"), 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("appears twice");
        assertThatThrownBy(() -> l.tryAcquireAllAsync(List.of("{t6}e", "{t6}f"), 3))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("permits");
    }

    @Test
    default void togetherIsAllOrNothingUnderConcurrency() throws Exception {
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
}
