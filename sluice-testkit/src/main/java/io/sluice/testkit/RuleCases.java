package io.sluice.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.Limit;
import io.sluice.Lockout;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.TokenBucket;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The contract cases of what a rule adds to its limits: several limits, lockouts and shadow limits. */
public interface RuleCases extends ContractFixture {

    // ---------------------------------------------------------------- rules of several limits

    @Test
    default void aRejectedRequestChargesNoLimit() {
        RateLimiter l = limiter(FixedWindow.of(5, Duration.ofMinutes(1)),
                TokenBucket.of(3, 1, Duration.ofSeconds(10)));
        assertThat(l.tryAcquire("k", 3).allowed()).isTrue();
        for (int i = 0; i < 10; i++) {
            Decision d = l.tryAcquire("k");
            assertThat(d.allowed()).isFalse();
            assertThat(d.limit()).isEqualTo("token_bucket");
        }
        clock().advance(Duration.ofSeconds(10));
        assertThat(l.tryAcquire("k").allowed()).isTrue();
        clock().advance(Duration.ofSeconds(10));
        Decision fifth = l.tryAcquire("k");
        assertThat(fifth.allowed()).isTrue();
        assertThat(fifth.remaining()).isZero();
        assertThat(fifth.limit()).isEqualTo("fixed_window");
        clock().advance(Duration.ofSeconds(10));
        Decision sixth = l.tryAcquire("k");
        assertThat(sixth.allowed()).isFalse();
        assertThat(sixth.limit()).isEqualTo("fixed_window");
    }

    // ---------------------------------------------------------------- lockouts

    @Test
    default void aLockoutRejectsEverythingUntilItEndsAndResetLiftsIt() {
        Rule rule = Rule.of("contract-" + UUID.randomUUID(), FixedWindow.of(2, Duration.ofMinutes(1)))
                .withLockout(Lockout.of(2, Duration.ofMinutes(5), Duration.ofHours(1)));
        RateLimiter l = limiterFor(rule);
        clock().setMicros(clock().nowMicros() / (60 * S) * (60 * S));   // the start of a minute
        assertThat(l.tryAcquire("k", 2).allowed()).isTrue();
        Decision first = l.tryAcquire("k");
        assertThat(first.lockedOut()).isFalse();
        assertThat(first.limit()).isEqualTo("fixed_window");
        clock().advance(Duration.ofSeconds(1));
        Decision second = l.tryAcquire("k");
        assertThat(second.lockedOut()).as("the second rejection within 5 minutes").isTrue();
        assertThat(second.limit()).isEqualTo(Lockout.NAME);
        assertThat(second.retryAfterMicros()).isEqualTo(3_600 * S);
        clock().advance(Duration.ofMinutes(2));
        Decision during = l.tryAcquire("k");
        assertThat(during.lockedOut()).as("a new minute, still locked out").isTrue();
        assertThat(during.retryAfterMicros()).isEqualTo(3_480 * S);
        assertThat(l.peek("k", 1).lockedOut()).isTrue();
        l.reset("k");
        assertThat(l.tryAcquire("k", 2).allowed()).isTrue();
        assertThat(l.tryAcquire("k").lockedOut()).as("the count was cleared").isFalse();
    }

    /**
     * A reload that removes a rule's lockout and one that adds it back: a key decided in between forgets its
     * count, in every store, so the lockout added back counts from zero.
     */
    @Test
    default void aLockoutRemovedAndAddedBackCountsAfresh() {
        String name = "contract-" + UUID.randomUUID();
        Limit once = FixedWindow.of(1, Duration.ofHours(1));
        Lockout lockout = Lockout.of(3, Duration.ofMinutes(15), Duration.ofHours(1));
        RateLimiter with = limiterFor(Rule.of(name, once).withLockout(lockout));
        assertThat(with.tryAcquire("k").allowed()).isTrue();
        assertThat(with.tryAcquire("k").lockedOut()).as("rejection 1").isFalse();
        assertThat(with.tryAcquire("k").lockedOut()).as("rejection 2").isFalse();
        RateLimiter without = limiterFor(Rule.of(name, once));
        Decision plain = without.tryAcquire("k");
        assertThat(plain.allowed()).isFalse();
        assertThat(plain.limit()).as("no lockout decides").isEqualTo("fixed_window");
        RateLimiter again = limiterFor(Rule.of(name, once).withLockout(lockout));
        assertThat(again.tryAcquire("k").lockedOut()).as("rejection 1 of a new count, not the third").isFalse();
        assertThat(again.tryAcquire("k").lockedOut()).as("rejection 2").isFalse();
        Decision third = again.tryAcquire("k");
        assertThat(third.lockedOut()).as("rejection 3 locks out").isTrue();
        assertThat(third.retryAfterMicros()).isEqualTo(3_600 * S);
    }

    /**
     * A reload that raises a lockout's {@code within}: the count kept under the old period is no count under the
     * new one (in Redis it would expire at the old period), and counting under the new period is exact.
     */
    @Test
    default void aLockoutWhosePeriodIsRaisedCountsAfreshUnderTheNewPeriod() {
        String name = "contract-" + UUID.randomUUID();
        Limit once = FixedWindow.of(1, Duration.ofDays(1));
        RateLimiter before = limiterFor(Rule.of(name, once)
                .withLockout(Lockout.of(3, Duration.ofMinutes(1), Duration.ofHours(1))));
        assertThat(before.tryAcquire("k").allowed()).isTrue();
        assertThat(before.tryAcquire("k").lockedOut()).as("rejection 1").isFalse();
        clock().advance(Duration.ofSeconds(10));
        assertThat(before.tryAcquire("k").lockedOut()).as("rejection 2").isFalse();
        RateLimiter after = limiterFor(Rule.of(name, once)
                .withLockout(Lockout.of(3, Duration.ofMinutes(10), Duration.ofHours(1))));
        clock().advance(Duration.ofMinutes(2));
        assertThat(after.tryAcquire("k").lockedOut()).as("rejection 1 under the new period").isFalse();
        clock().advance(Duration.ofMinutes(4));
        assertThat(after.tryAcquire("k").lockedOut()).as("rejection 2, 4 minutes on").isFalse();
        clock().advance(Duration.ofMinutes(5));
        Decision third = after.tryAcquire("k");
        assertThat(third.lockedOut()).as("rejection 3, 9 minutes after the first: within 10").isTrue();
        assertThat(third.retryAfterMicros()).isEqualTo(3_600 * S);
    }

    /** A reload that changes a lockout's {@code for} does not move the end of a lockout in force. */
    @Test
    default void aLockoutInForceRunsItsCourseWhenItsDurationChanges() {
        String name = "contract-" + UUID.randomUUID();
        Limit once = FixedWindow.of(1, Duration.ofDays(1));
        RateLimiter hour = limiterFor(Rule.of(name, once)
                .withLockout(Lockout.of(1, Duration.ofMinutes(5), Duration.ofHours(1))));
        assertThat(hour.tryAcquire("k").allowed()).isTrue();
        assertThat(hour.tryAcquire("k").lockedOut()).isTrue();
        RateLimiter minute = limiterFor(Rule.of(name, once)
                .withLockout(Lockout.of(1, Duration.ofMinutes(5), Duration.ofMinutes(1))));
        clock().advance(Duration.ofMinutes(10));
        Decision during = minute.tryAcquire("k");
        assertThat(during.lockedOut()).isTrue();
        assertThat(during.retryAfterMicros()).as("the hour it was given").isEqualTo(3_000 * S);
        minute.reset("k");
        assertThat(minute.tryAcquire("k").allowed()).as("reset lifts it").isTrue();
    }

    // ---------------------------------------------------------------- shadow limits

    /** A limiter like {@link ContractFixture#limiter} in which the limits named {@code shadow} are shadow limits. */
    default RateLimiter shadowLimiter(List<String> shadow, Limit... limits) {
        Rule rule = Rule.of("contract-" + UUID.randomUUID(), limits).withShadow(shadow.toArray(String[]::new));
        return limiterFor(rule);
    }

    @Test
    default void aShadowLimitCountsWhatItWouldAdmitButNeverRejects() {
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
        clock().advance(Duration.ofSeconds(10));
        // a token came back; a request the enforced limit rejects charges the shadow limit nothing either
        Decision fifth = l.tryAcquire("k");
        assertThat(fifth.allowed()).isFalse();
        assertThat(fifth.shadowRejected()).isFalse();
        assertThat(l.peek("k", 1).shadowRejected()).isFalse();
        assertThat(l.peek("k", 2).shadowLimit()).isEqualTo("watch");
    }

    @Test
    default void aRuleOfShadowLimitsAdmitsEverythingAndSaysWhatItWouldHaveDone() {
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
        clock().advance(Duration.ofSeconds(10));
        // the reservation the shadow bucket would have granted took the refilled token
        assertThat(l.tryAcquire("k").shadowRetryAfterMicros()).isEqualTo(10 * S);
    }

    @Test
    default void bestEffortGrantsTheSmallestAmountEveryLimitAllows() {
        RateLimiter l = limiter(FixedWindow.of(8, Duration.ofMinutes(1)),
                TokenBucket.of(5, 1, Duration.ofSeconds(1)));
        Decision d = l.tryAcquireAtMost("k", 7);
        assertThat(d.granted()).isEqualTo(5);
        assertThat(d.remaining()).isZero();
        clock().advance(Duration.ofSeconds(10));
        Decision e = l.tryAcquireAtMost("k", 7);
        assertThat(e.granted()).isEqualTo(3);
        assertThat(e.limit()).isEqualTo("fixed_window");
    }
}
