package io.sluice.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Concurrency;
import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.Gcra;
import io.sluice.LeakyBucket;
import io.sluice.RefreshPeriod;
import io.sluice.RollingWindow;
import io.sluice.SlidingLog;
import io.sluice.SlidingWindow;
import io.sluice.SmoothBursty;
import io.sluice.SmoothWarmingUp;
import io.sluice.TokenBucket;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The draft-11 header fields: each algorithm's policy, sf-string escaping, the RateLimit item. */
class RateLimitFieldsTest {

    private static String item(io.sluice.Limit limit) {
        RateLimitFields.Policy p = RateLimitFields.policy(limit);
        return p == null ? null : p.item();
    }

    @Test
    void windowAlgorithmsAdvertiseTheirLimitPerWindow() {
        assertThat(item(FixedWindow.of(100, Duration.ofMinutes(1)).named("a"))).isEqualTo("\"a\";q=100;w=60");
        assertThat(item(SlidingLog.of(30, Duration.ofHours(1)).named("b"))).isEqualTo("\"b\";q=30;w=3600");
        assertThat(item(SlidingWindow.of(5, Duration.ofSeconds(10)).named("c"))).isEqualTo("\"c\";q=5;w=10");
        assertThat(item(RollingWindow.of(5, Duration.ofSeconds(10), Duration.ofSeconds(1)).named("d")))
                .isEqualTo("\"d\";q=5;w=10");
        assertThat(item(RefreshPeriod.of(7, Duration.ofSeconds(2)).named("e"))).isEqualTo("\"e\";q=7;w=2");
        // No sub-second windows in the draft: w is left out rather than rounded.
        assertThat(item(FixedWindow.of(10, Duration.ofMillis(1500)).named("f"))).isEqualTo("\"f\";q=10");
    }

    @Test
    void bucketsAdvertiseTheirCapacityAndTheTimeToRefillIt() {
        assertThat(item(TokenBucket.of(100, 10, Duration.ofSeconds(1)).named("t"))).isEqualTo("\"t\";q=100;w=10");
        assertThat(item(TokenBucket.of(3, 2, Duration.ofSeconds(1)).named("t"))).isEqualTo("\"t\";q=3");
        assertThat(item(Gcra.of(10, Duration.ofSeconds(1)).withBurst(20).named("g"))).isEqualTo("\"g\";q=20;w=2");
        assertThat(item(Gcra.of(10, Duration.ofSeconds(1)).withBurst(5).named("g"))).isEqualTo("\"g\";q=5");
        assertThat(item(LeakyBucket.of(1, Duration.ofSeconds(2)).withBurst(4).named("l"))).isEqualTo("\"l\";q=5;w=10");
        assertThat(item(Concurrency.of(3, Duration.ofMinutes(1)).named("c")))
                .isEqualTo("\"c\";q=3;qu=\"concurrent-requests\"");
    }

    @Test
    void smoothLimitersAdvertiseAWholeNumberRateOrNothing() {
        assertThat(item(SmoothBursty.of(5).named("s"))).isEqualTo("\"s\";q=5;w=1");
        assertThat(item(SmoothBursty.of(0.25).named("s"))).isEqualTo("\"s\";q=1;w=4");
        assertThat(item(SmoothWarmingUp.of(2.5, Duration.ofSeconds(1)).named("s"))).isNull();
    }

    @Test
    void policyIdentifiersAreValidSfStrings() {
        assertThat(RateLimitFields.sfString(new StringBuilder(), "a \"quoted\" \\ name").toString())
                .isEqualTo("\"a \\\"quoted\\\" \\\\ name\"");
        assertThat(RateLimitFields.sfString(new StringBuilder(), "100%é☃\t").toString())
                .isEqualTo("\"100%25%C3%A9%E2%98%83%09\"");
        assertThat(RateLimitFields.policyField(Arrays.asList(
                RateLimitFields.policy(FixedWindow.of(1, Duration.ofSeconds(1)).named("x")), null,
                RateLimitFields.policy(FixedWindow.of(2, Duration.ofSeconds(2)).named("y")))))
                .isEqualTo("\"x\";q=1;w=1, \"y\";q=2;w=2");
        assertThat(RateLimitFields.policyField(Arrays.asList((RateLimitFields.Policy) null))).isNull();
    }

    @Test
    void rateLimitItemsUseTheRetryAfterWhenRejectedRoundedUp() {
        Decision admitted = new Decision(true, 1, 4, 0, 59_000_001, 0, "per_minute", Decision.NO_LEASE);
        assertThat(RateLimitFields.rateLimitField(admitted, 1)).isEqualTo("\"per_minute\";r=4;t=60");
        assertThat(RateLimitFields.rateLimitField(admitted, 2)).isEqualTo("\"per_minute\";r=4");
        Decision rejected = new Decision(false, 0, 0, 1_500_000, 60_000_000, 0, "per_minute", Decision.NO_LEASE);
        assertThat(RateLimitFields.rateLimitField(rejected, 2)).isEqualTo("\"per_minute\";r=0;t=2");
        Decision never = new Decision(false, 0, 0, Long.MAX_VALUE, 0, 0, "per_minute", Decision.NO_LEASE);
        assertThat(RateLimitFields.rateLimitField(never, 1)).isEqualTo("\"per_minute\";r=0");
    }

    @Test
    void aRuleAdvertisesEachLimitThatHasAPolicy() {
        io.sluice.Rule rule = io.sluice.Rule.of("api", FixedWindow.of(10, Duration.ofMinutes(1)).named("per_minute"),
                SmoothBursty.of(0.3).named("smooth"), Concurrency.of(2, Duration.ofMinutes(1)).named("in_flight"));
        assertThat(RateLimitFields.policyField(rule))
                .isEqualTo("\"per_minute\";q=10;w=60, \"in_flight\";q=2;qu=\"concurrent-requests\"");
        assertThat(RateLimitFields.policyField(io.sluice.Rule.of("r", SmoothBursty.of(0.3)))).isNull();
        Decision rejected = new Decision(false, 0, 0, 1_500_000, 60_000_000, 0, "per_minute", Decision.NO_LEASE);
        assertThat(RateLimitFields.rateLimitField(rejected, rule)).isEqualTo("\"per_minute\";r=0;t=2");
    }
}
