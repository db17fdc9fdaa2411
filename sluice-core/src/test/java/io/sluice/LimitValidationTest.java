package io.sluice;

import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.stream.Stream;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

/** Every invalid parameter fails with IllegalArgumentException naming the field and the accepted range. */
class LimitValidationTest {

    private static final Duration S = Duration.ofSeconds(1);

    static Stream<Arguments> invalid() {
        return Stream.of(
                bad("limit", "[1, 1000000000000]", () -> FixedWindow.of(0, S)),
                bad("limit", "[1, 1000000000000]", () -> FixedWindow.of(-5, S)),
                bad("limit", "[1, 1000000000000]", () -> FixedWindow.of(Limit.MAX_COUNT + 1, S)),
                bad("window", "[1us", () -> FixedWindow.of(1, Duration.ZERO)),
                bad("window", "[1us", () -> FixedWindow.of(1, Duration.ofSeconds(-1))),
                bad("window", "PT8784H", () -> FixedWindow.of(1, Duration.ofDays(367))),
                bad("window", "whole number of microseconds", () -> FixedWindow.of(1, Duration.ofNanos(1500))),
                bad("window", "must not be null", () -> FixedWindow.of(1, null)),
                bad("align", "must not be null", () -> FixedWindow.of(1, S).withAlign(null)),
                bad("name", "non-empty", () -> FixedWindow.of(1, S).named("")),
                bad("name", "non-empty", () -> FixedWindow.of(1, S).named(null)),
                bad("limit", "[1, 1000000]", () -> SlidingLog.of(1_000_001, S)),
                bad("min_gap", "[0, window", () -> SlidingLog.of(1, S).withMinGap(Duration.ofSeconds(2))),
                bad("min_gap", "[0us", () -> SlidingLog.of(1, S).withMinGap(Duration.ofSeconds(-2))),
                bad("limit", "[1,", () -> SlidingWindow.of(0, S)),
                bad("bucket", "[1us, window", () -> RollingWindow.of(1, S, Duration.ofSeconds(2))),
                bad("bucket", "at least window/10000", () -> RollingWindow.of(1, S, Duration.ofNanos(1000))),
                bad("capacity", "[1,", () -> TokenBucket.of(0, 1, S)),
                bad("refill_tokens", "[1,", () -> TokenBucket.of(1, 0, S)),
                bad("refill_period", "[1us", () -> TokenBucket.of(1, 1, Duration.ZERO)),
                bad("initial_tokens", "[0, 10]", () -> TokenBucket.of(10, 1, S).withInitialTokens(11)),
                bad("initial_tokens", "[0, 10]", () -> TokenBucket.of(10, 1, S).withInitialTokens(-1)),
                bad("refill", "must not be null", () -> TokenBucket.of(10, 1, S).withRefill((TokenBucket.Refill) null)),
                bad("refill_tokens/refill_period", "2^53",
                        () -> TokenBucket.of(10, 999_999_999_989L, Duration.ofDays(300))),
                bad("limit", "[1,", () -> Gcra.of(0, S)),
                bad("limit", "[1, 1000000]", () -> Gcra.of(2_000_000, S)),
                bad("burst", "[1,", () -> Gcra.of(10, S).withBurst(0)),
                bad("limit", "[1, 1000000000]", () -> LeakyBucket.of(0, S)),
                bad("burst", "[0, 1000000000]", () -> LeakyBucket.of(1, S).withBurst(-1)),
                bad("delay", "[0, 2]", () -> LeakyBucket.of(1, S).withBurst(2).withDelay(3)),
                bad("delay", "[0, 1]", () -> LeakyBucket.of(1, S).withBurst(3).withDelay(3).withBurst(1)),
                bad("permits_per_second", "finite", () -> SmoothBursty.of(0)),
                bad("permits_per_second", "one per 366 days", () -> SmoothBursty.of(Double.MIN_VALUE)),
                bad("permits_per_second", "finite", () -> SmoothBursty.of(-1)),
                bad("permits_per_second", "finite", () -> SmoothBursty.of(Double.NaN)),
                bad("permits_per_second", "finite", () -> SmoothBursty.of(Double.POSITIVE_INFINITY)),
                bad("max_burst_seconds", "finite", () -> SmoothBursty.of(1).withMaxBurstSeconds(-1)),
                bad("max_burst_seconds", "finite", () -> SmoothBursty.of(1).withMaxBurstSeconds(Double.NaN)),
                bad("permits_per_second", "finite", () -> SmoothWarmingUp.of(Double.NaN, S)),
                bad("warmup", "[1us", () -> SmoothWarmingUp.of(1, Duration.ZERO)),
                bad("cold_factor", "(1.0, 1000.0]", () -> SmoothWarmingUp.of(1, S).withColdFactor(0.5)),
                bad("cold_factor", "(1.0, 1000.0]", () -> SmoothWarmingUp.of(1, S).withColdFactor(Double.NaN)),
                bad("limit_for_period", "[1,", () -> RefreshPeriod.of(0, S)),
                bad("refresh_period", "[1us", () -> RefreshPeriod.of(1, Duration.ZERO)),
                bad("timeout", "[0us", () -> RefreshPeriod.of(1, S).withTimeout(Duration.ofSeconds(-1))),
                bad("max_concurrent", "[1, 1000000]", () -> Concurrency.of(0, S)),
                bad("lease_ttl", "[1us", () -> Concurrency.of(1, Duration.ZERO)));
    }

    private static Arguments bad(String field, String range, ThrowingCallable call) {
        return Arguments.of(field, range, call);
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("invalid")
    void invalidParameterNamesFieldAndRange(String field, String range, ThrowingCallable call) {
        assertThatThrownBy(call).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(field).hasMessageContaining(range);
    }

    @Test
    void zeroBurstAndZeroGapAreValidChoices() {
        assertThat(SmoothBursty.of(1).withMaxBurstSeconds(0).maxBurstSeconds()).isZero();
        assertThat(SlidingLog.of(1, S).withMinGap(Duration.ZERO).minGap()).isZero();
        assertThat(LeakyBucket.of(1, S).burst()).isZero();
        assertThat(SmoothWarmingUp.of(1, S).withColdFactor(1.0).coldFactor()).isEqualTo(1.0);
    }

    @Test
    void rulesRejectDuplicateNamesEmptyAndTwoConcurrencyLimits() {
        assertThatThrownBy(() -> Rule.of("r", FixedWindow.of(1, S), FixedWindow.of(2, S)))
                .hasMessageContaining("unique").hasMessageContaining("fixed_window");
        assertThatThrownBy(() -> Rule.of("r")).hasMessageContaining("at least one limit");
        assertThatThrownBy(() -> Rule.of("", FixedWindow.of(1, S))).hasMessageContaining("rule name");
        assertThatThrownBy(() -> Rule.of("r", Concurrency.of(1, S), Concurrency.of(2, S).named("c2")))
                .hasMessageContaining("at most one concurrency");
        assertThatThrownBy(() -> Rule.of("r", FixedWindow.of(1, S), null)).hasMessageContaining("limits");
    }

    @Test
    void permitsBeyondWhatALimitCanEverGrantAreRejected() {
        try (RateLimiter l = RateLimiter.builder(Rule.of("r", Gcra.of(10, S).withBurst(3), FixedWindow.of(100, S)))
                .build()) {
            assertThatThrownBy(() -> l.tryAcquire("k", 4)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("permits must be in [1, 3]");
            assertThatThrownBy(() -> l.reserve("k", 4, S)).hasMessageContaining("permits must be in [1, 3]");
            assertThatThrownBy(() -> l.peek("k", -1)).hasMessageContaining("permits");
            assertThatThrownBy(() -> l.tryAcquireAtMost("k", 0)).hasMessageContaining("permits");
            assertThat(l.tryAcquireAtMost("k", 50).granted()).isEqualTo(3);
        }
    }
}
