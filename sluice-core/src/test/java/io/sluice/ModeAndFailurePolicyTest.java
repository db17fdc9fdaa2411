package io.sluice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.internal.LimitShares;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Per-rule modes and failure policies: defaults, validation against the rule's limits, and local shares. */
class ModeAndFailurePolicyTest {

    private static final Duration MINUTE = Duration.ofMinutes(1);

    @Test
    void aRuleIsExactAndRaisesByDefault() {
        Rule rule = Rule.of("api", FixedWindow.of(30, MINUTE));
        assertThat(rule.mode()).isEqualTo(Mode.exact());
        assertThat(rule.failurePolicy()).isEqualTo(FailurePolicy.raise());
        assertThat(rule.toString()).doesNotContain("mode").doesNotContain("on_failure");
    }

    @Test
    void modeAndPolicySurviveLimitUpdatesAndTakePartInEquality() {
        Rule rule = Rule.of("api", FixedWindow.of(30, MINUTE)).withMode(Mode.leased())
                .withFailurePolicy(FailurePolicy.failOpen());
        Rule updated = rule.withLimit(FixedWindow.of(60, MINUTE));
        assertThat(updated.mode()).isEqualTo(Mode.leased());
        assertThat(updated.failurePolicy()).isEqualTo(FailurePolicy.failOpen());
        assertThat(rule).isNotEqualTo(Rule.of("api", FixedWindow.of(30, MINUTE)));
        assertThat(rule).isEqualTo(Rule.of("api", FixedWindow.of(30, MINUTE)).withMode(Mode.leased())
                .withFailurePolicy(FailurePolicy.failOpen()));
        assertThat(rule.toString()).contains("mode=leased").contains("on_failure=fail_open");
    }

    @Test
    void leasedModeRefusesAlgorithmsThatReserveOrHandOutLeases() {
        Rule rule = Rule.of("jobs", TokenBucket.of(10, 1, Duration.ofSeconds(1)),
                Concurrency.of(5, MINUTE).named("in_flight"));
        assertThatThrownBy(() -> rule.withMode(Mode.leased()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("mode leased of rule 'jobs'")
                .hasMessageContaining("limit 'in_flight' is concurrency");
        assertThatThrownBy(() -> Rule.of("shape", LeakyBucket.of(10, MINUTE)).withMode(Mode.leased()))
                .hasMessageContaining("leaky_bucket");
    }

    @Test
    void syncedModeRunsOnlyTheWindowCounters() {
        Rule ok = Rule.of("api", FixedWindow.of(30, MINUTE), SlidingWindow.of(100, MINUTE).named("sliding"))
                .withMode(Mode.synced(Duration.ofMillis(50)));
        assertThat(ok.mode().syncInterval()).isEqualTo(Duration.ofMillis(50));
        assertThatThrownBy(() -> Rule.of("api", Gcra.of(10, MINUTE)).withMode(Mode.synced(Duration.ofMillis(50))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("supports [fixed_window, sliding_window]")
                .hasMessageContaining("is gcra");
    }

    @Test
    void modeParametersAreValidatedAndBelongToTheirMode() {
        assertThatThrownBy(() -> Mode.synced(Duration.ZERO)).hasMessageContaining("sync_interval must be between");
        assertThatThrownBy(() -> Mode.synced(Duration.ofHours(2))).hasMessageContaining("sync_interval");
        assertThatThrownBy(() -> Mode.synced(null)).hasMessageContaining("was null");
        assertThatThrownBy(() -> Mode.leased().withLeaseTtl(Duration.ofNanos(10))).hasMessageContaining("lease_ttl");
        assertThatThrownBy(() -> Mode.leased().withMaxBatch(0)).hasMessageContaining("max_batch must be in [1, ");
        assertThatThrownBy(() -> Mode.exact().withMaxBatch(10))
                .hasMessageContaining("max_batch applies to mode leased, not exact");
        Mode leased = Mode.leased().withLeaseTtl(Duration.ofSeconds(2)).withMaxBatch(50);
        assertThat(leased.leaseTtl()).isEqualTo(Duration.ofSeconds(2));
        assertThat(leased.maxBatch()).isEqualTo(50);
        assertThat(Mode.leased().maxBatch()).isZero();
        assertThat(leased.toString()).isEqualTo("leased(ttl=PT2S, maxBatch=50)");
    }

    @Test
    void aFallbackShareMustLeaveEveryLimitAPermit() {
        Rule rule = Rule.of("partner", SlidingLog.of(30, MINUTE));
        assertThat(rule.withFailurePolicy(FailurePolicy.localFallback(0.25)).failurePolicy().share()).isEqualTo(0.25);
        assertThatThrownBy(() -> rule.withFailurePolicy(FailurePolicy.localFallback(0.02)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("fallback_share 0.02 leaves limit 'sliding_log' of rule 'partner' with limit=0 (from 30)")
                .hasMessageContaining("at least 1/30");
        assertThatThrownBy(() -> FailurePolicy.localFallback(0)).hasMessageContaining("fallback_share must be");
        assertThatThrownBy(() -> FailurePolicy.localFallback(1.5)).hasMessageContaining("fallback_share must be");
        assertThatThrownBy(() -> FailurePolicy.localFallback(Double.NaN)).hasMessageContaining("fallback_share");
    }

    @Test
    void aShareScalesCountsAndRatesButNotWindows() {
        Rule rule = Rule.of("r",
                FixedWindow.of(30, MINUTE).named("a"),
                TokenBucket.of(100, 10, Duration.ofSeconds(1)).named("b"),
                Gcra.of(40, MINUTE).withBurst(8).named("c"),
                SmoothBursty.of(10.0).named("d"),
                RefreshPeriod.of(50, Duration.ofSeconds(1)).named("e"),
                Concurrency.of(8, MINUTE).named("f"),
                LeakyBucket.of(20, MINUTE).withBurst(6).named("g"));
        List<Limit> scaled = LimitShares.scale(rule, 0.25).limits();
        assertThat(scaled.get(0)).isEqualTo(FixedWindow.of(7, MINUTE).named("a"));
        assertThat(scaled.get(1)).isEqualTo(TokenBucket.of(25, 2, Duration.ofSeconds(1)).named("b"));
        assertThat(scaled.get(2)).isEqualTo(Gcra.of(10, MINUTE).withBurst(2).named("c"));
        assertThat(((SmoothBursty) scaled.get(3)).permitsPerSecond()).isEqualTo(2.5);
        assertThat(scaled.get(4)).isEqualTo(RefreshPeriod.of(12, Duration.ofSeconds(1)).named("e"));
        assertThat(scaled.get(5)).isEqualTo(Concurrency.of(2, MINUTE).named("f"));
        assertThat(scaled.get(6)).isEqualTo(LeakyBucket.of(5, MINUTE).withBurst(1).named("g"));
        assertThat(LimitShares.scale(rule, 1.0)).isEqualTo(rule);
    }

    @Test
    void aDecisionSaysWhoMadeIt() {
        Decision d = new Decision(true, 1, 4, 0, 10, 0, "a", Decision.NO_LEASE);
        assertThat(d.source()).isEqualTo(Decision.Source.STORE);
        Decision open = d.withSource(Decision.Source.FAIL_OPEN);
        assertThat(open.source()).isEqualTo(Decision.Source.FAIL_OPEN);
        assertThat(open.source().degraded()).isTrue();
        assertThat(Decision.Source.LEASE.degraded()).isFalse();
        assertThat(open).isNotEqualTo(d);
        assertThat(open.toString()).contains("source=FAIL_OPEN");
        assertThat(d.toString()).doesNotContain("source");
        assertThat(d.withSource(Decision.Source.STORE)).isSameAs(d);
        assertThatThrownBy(() -> d.withSource(null)).hasMessageContaining("source");
    }
}
