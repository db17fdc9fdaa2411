package io.sluice.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.Gcra;
import io.sluice.LeakyBucket;
import io.sluice.Mode;
import io.sluice.RefreshPeriod;
import io.sluice.RollingWindow;
import io.sluice.Rule;
import io.sluice.SlidingLog;
import io.sluice.SlidingWindow;
import io.sluice.TokenBucket;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** What a lease of a rule may be: its batch cap and how its lifetime is bounded. */
class LeasePlanTest {

    private static Decision reply(long resetAfterMicros) {
        return new Decision(true, 10, 0, 0, resetAfterMicros, 0, "l", Decision.NO_LEASE);
    }

    @Test
    void theLimitCountIsWhatOneKeyCanHoldAtOnce() {
        assertThat(LeasePlan.limitCount(FixedWindow.of(100, Duration.ofSeconds(1)))).isEqualTo(100);
        assertThat(LeasePlan.limitCount(SlidingLog.of(101, Duration.ofSeconds(1)))).isEqualTo(101);
        assertThat(LeasePlan.limitCount(SlidingWindow.of(102, Duration.ofSeconds(1)))).isEqualTo(102);
        assertThat(LeasePlan.limitCount(RollingWindow.of(103, Duration.ofSeconds(10), Duration.ofSeconds(1))))
                .isEqualTo(103);
        assertThat(LeasePlan.limitCount(TokenBucket.of(104, 1, Duration.ofSeconds(1)))).isEqualTo(104);
        assertThat(LeasePlan.limitCount(Gcra.of(1000, Duration.ofSeconds(1)).withBurst(105))).isEqualTo(105);
        assertThat(LeasePlan.limitCount(RefreshPeriod.of(106, Duration.ofSeconds(1)))).isEqualTo(106);
        assertThatThrownBy(() -> LeasePlan.limitCount(LeakyBucket.of(1, Duration.ofSeconds(1))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cannot be leased");
    }

    @Test
    void theAutomaticBatchCapIsASixteenthOfTheSmallestLimitCountAndAtLeastOne() {
        Rule rule = Rule.of("r", FixedWindow.of(1000, Duration.ofSeconds(1)),
                TokenBucket.of(320, 1, Duration.ofSeconds(1))).withMode(Mode.leased());
        assertThat(LeasePlan.of(rule, false).maxBatch()).isEqualTo(20);
        Rule tiny = Rule.of("t", TokenBucket.of(15, 1, Duration.ofSeconds(1))).withMode(Mode.leased());
        assertThat(LeasePlan.of(tiny, false).maxBatch()).isEqualTo(1);
        assertThat(LeasePlan.of(tiny.withMode(Mode.leased().withMaxBatch(7)), false).maxBatch()).isEqualTo(7);
    }

    @Test
    void aRuleWithoutWindowsLeasesForTheTtl() {
        Rule rule = Rule.of("r", TokenBucket.of(100, 1, Duration.ofSeconds(1)), SlidingLog.of(50, Duration.ofHours(1)))
                .withMode(Mode.leased().withLeaseTtl(Duration.ofMillis(250)));
        LeasePlan plan = LeasePlan.of(rule, false);
        assertThat(plan.bound()).isEqualTo(LeasePlan.Bound.TTL);
        assertThat(plan.lifetime(reply(7), 0)).isEqualTo(250_000);
    }

    @Test
    void oneWindowedLimitEndsTheLeaseAtItsResetShortenedByTheClockRateMarginUnderServerTime() {
        Rule rule = Rule.of("r", FixedWindow.of(100, Duration.ofSeconds(10))).withMode(Mode.leased()
                .withLeaseTtl(Duration.ofSeconds(5)));
        LeasePlan server = LeasePlan.of(rule, false);
        assertThat(server.bound()).isEqualTo(LeasePlan.Bound.RESET_AFTER);
        assertThat(server.lifetime(reply(2_000_000), 0)).isEqualTo(1_998_000);
        assertThat(server.lifetime(reply(9_000_000), 0)).as("the TTL is shorter").isEqualTo(5_000_000);
        assertThat(LeasePlan.of(rule, true).lifetime(reply(2_000_000), 0)).isEqualTo(2_000_000);
        Rule cycle = Rule.of("c", RefreshPeriod.of(10, Duration.ofSeconds(1))).withMode(Mode.leased());
        assertThat(LeasePlan.of(cycle, true).lifetime(reply(300_000), 0)).isEqualTo(300_000);
    }

    @Test
    void severalEpochWindowsUnderClientTimeEndTheLeaseAtTheFirstWindowEnd() {
        Rule rule = Rule.of("r", FixedWindow.of(100, Duration.ofSeconds(1)).named("second"),
                FixedWindow.of(1000, Duration.ofMinutes(1)).named("minute"),
                TokenBucket.of(100, 1, Duration.ofHours(1))).withMode(Mode.leased()
                .withLeaseTtl(Duration.ofSeconds(2)));
        LeasePlan plan = LeasePlan.of(rule, true);
        assertThat(plan.bound()).isEqualTo(LeasePlan.Bound.EPOCH_WINDOWS);
        assertThat(plan.lifetime(reply(Long.MAX_VALUE), 59_999_400_000L)).isEqualTo(600_000);
        assertThat(plan.lifetime(reply(Long.MAX_VALUE), 59_999_999_999L)).isEqualTo(1);
        assertThat(plan.lifetime(reply(Long.MAX_VALUE), 60_000_000_000L)).isEqualTo(1_000_000);
    }

    @Test
    void severalLimitsWithAWindowThisNodeCannotSeeAreNotLeased() {
        Rule epoch = Rule.of("e", FixedWindow.of(100, Duration.ofSeconds(1)),
                TokenBucket.of(100, 1, Duration.ofHours(1))).withMode(Mode.leased());
        LeasePlan serverTime = LeasePlan.of(epoch, false);
        assertThat(serverTime.leased()).isFalse();
        assertThat(serverTime.notLeasedBecause()).contains("give it a clock");
        Rule firstRequest = Rule.of("f", FixedWindow.of(100, Duration.ofSeconds(1)).withAlign(
                FixedWindow.Align.FIRST_REQUEST), TokenBucket.of(100, 1, Duration.ofHours(1))).withMode(Mode.leased());
        assertThat(LeasePlan.of(firstRequest, true).notLeasedBecause()).contains("first request");
        Rule cycle = Rule.of("c", RefreshPeriod.of(100, Duration.ofSeconds(1)),
                TokenBucket.of(100, 1, Duration.ofHours(1))).withMode(Mode.leased());
        assertThat(LeasePlan.of(cycle, true).leased()).isFalse();
    }

    @Test
    void onlyLeasedRulesHaveAPlan() {
        Rule exact = Rule.of("x", FixedWindow.of(100, Duration.ofSeconds(1)));
        assertThatThrownBy(() -> LeasePlan.of(exact, false)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must be in mode leased");
    }
}
