package io.sluice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The login form of the reference (docs/reference/rule-file.md, "Lockouts") and the lockout's validation. */
class LockoutTest {

    private final AtomicLong now = new AtomicLong(1_767_225_600_000_000L);
    private final Rule login = Rule.of("login", FixedWindow.of(5, Duration.ofMinutes(1)))
            .withLockout(Lockout.of(3, Duration.ofMinutes(15), Duration.ofHours(1)));

    @Test
    void threeRejectionsWithinFifteenMinutesLockTheKeyOutForAnHour() {
        try (RateLimiter limiter = RateLimiter.builder(login).store(Store.memory().clock(now::get).build()).build()) {
            for (int i = 0; i < 5; i++) {
                assertThat(limiter.tryAcquire("user:42").allowed()).isTrue();
            }
            assertThat(limiter.tryAcquire("user:42").limit()).isEqualTo("fixed_window");
            assertThat(limiter.tryAcquire("user:42").lockedOut()).isFalse();
            Decision third = limiter.tryAcquire("user:42");
            assertThat(third.lockedOut()).isTrue();
            assertThat(third.limit()).isEqualTo(Lockout.NAME);
            assertThat(third.retryAfter()).isEqualTo(Duration.ofHours(1));
            assertThat(limiter.tryAcquire("user:7").allowed()).isTrue();

            now.addAndGet(Duration.ofMinutes(59).toNanos() / 1000);
            Decision later = limiter.tryAcquire("user:42");
            assertThat(later.lockedOut()).isTrue();
            assertThat(later.retryAfter()).isEqualTo(Duration.ofMinutes(1));
            assertThat(limiter.peek("user:42", 1).lockedOut()).isTrue();

            now.addAndGet(Duration.ofMinutes(1).toNanos() / 1000);
            assertThat(limiter.tryAcquire("user:42").allowed()).isTrue();
        }
    }

    @Test
    void aTierOfLimitsLocksItsKeysOutByItsOwnRejectionsAndNamesTheTier() {
        Rule tiered = login.withTiers(Tier.named("partner").keys("partner-*")
                .limits(FixedWindow.of(2, Duration.ofMinutes(1)).named("partner_per_minute")));
        try (RateLimiter limiter = RateLimiter.builder(tiered).store(Store.memory().clock(now::get).build()).build()) {
            assertThat(limiter.tryAcquire("partner-1").allowed()).isTrue();
            assertThat(limiter.tryAcquire("partner-1").allowed()).isTrue();
            assertThat(limiter.tryAcquire("partner-1").limit()).isEqualTo("partner_per_minute");
            assertThat(limiter.tryAcquire("partner-1").lockedOut()).isFalse();
            Decision third = limiter.tryAcquire("partner-1");
            assertThat(third.lockedOut()).as("the third rejection by the tier's limit").isTrue();
            assertThat(third.tier()).isEqualTo("partner");
            assertThat(limiter.tryAcquire("user:42").allowed()).as("a key of the rule's own limits").isTrue();
            limiter.reset("partner-1");
            assertThat(limiter.tryAcquire("partner-1").allowed()).as("reset lifts it in the tier").isTrue();
        }
    }

    @Test
    void acquireReturnsALockoutAtOnce() throws InterruptedException {
        try (RateLimiter limiter = RateLimiter.builder(login).store(Store.memory().clock(now::get).build())
                .sleeper(micros -> now.addAndGet(micros)).build()) {
            for (int i = 0; i < 7; i++) {
                limiter.tryAcquire("k");
            }
            long before = now.get();
            Decision d = limiter.acquire("k", 1, Duration.ofDays(1));
            assertThat(d.lockedOut()).isTrue();
            assertThat(now.get()).as("nothing slept").isEqualTo(before);
        }
    }

    @Test
    void resetLiftsTheLockoutAndClearsTheCount() {
        try (RateLimiter limiter = RateLimiter.builder(login).store(Store.memory().clock(now::get).build()).build()) {
            for (int i = 0; i < 8; i++) {
                limiter.tryAcquire("k");
            }
            assertThat(limiter.tryAcquire("k").lockedOut()).isTrue();
            limiter.reset("k");
            for (int i = 0; i < 5; i++) {
                assertThat(limiter.tryAcquire("k").allowed()).isTrue();
            }
            // the count started again from 0: two rejections do not lock the key out
            assertThat(limiter.tryAcquire("k").lockedOut()).isFalse();
            assertThat(limiter.tryAcquire("k").lockedOut()).isFalse();
            assertThat(limiter.tryAcquire("k").lockedOut()).isTrue();
        }
    }

    @Test
    void rejectionsFurtherApartThanWithinDoNotLockOut() {
        Rule rule = Rule.of("r", FixedWindow.of(1, Duration.ofMinutes(10)))
                .withLockout(Lockout.of(2, Duration.ofMinutes(5), Duration.ofHours(1)));
        try (RateLimiter limiter = RateLimiter.builder(rule).store(Store.memory().clock(now::get).build()).build()) {
            limiter.tryAcquire("k");
            assertThat(limiter.tryAcquire("k").lockedOut()).isFalse();
            now.addAndGet(Duration.ofMinutes(6).toNanos() / 1000);
            assertThat(limiter.tryAcquire("k").lockedOut()).as("a new window opened 6 minutes later").isFalse();
            assertThat(limiter.tryAcquire("k").lockedOut()).isTrue();
        }
    }

    @Test
    void badLockoutsAreRefusedNamingTheField() {
        assertThatThrownBy(() -> Lockout.of(0, Duration.ofMinutes(1), Duration.ofHours(1)))
                .hasMessage("lockout.after must be in [1, 1000000000000], was 0");
        assertThatThrownBy(() -> Lockout.of(3, Duration.ZERO, Duration.ofHours(1)))
                .hasMessageStartingWith("lockout.within must be in [1us, PT8784H], was PT0S");
        assertThatThrownBy(() -> Lockout.of(3, Duration.ofMinutes(1), null))
                .hasMessage("lockout.for must not be null");
        assertThatThrownBy(() -> login.withMode(Mode.coalesced()))
                .hasMessage("lockout of rule 'login' runs in the exact mode only; its mode is coalesced");
    }

    @Test
    void aLockoutCannotBeDecidedTogetherWithOtherTargets() {
        Store store = Store.memory().clock(now::get).build();
        assertThatThrownBy(() -> store.decideTogether(List.of(new Store.Target(login, "a"),
                new Store.Target(login, "b")), Request.tryAcquire(1)))
                .hasMessage("rule 'login' has a lockout: it cannot be decided together with other targets");
    }
}
