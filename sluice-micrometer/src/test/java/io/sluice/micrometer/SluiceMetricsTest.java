package io.sluice.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.SluiceListener.BreakerState;
import io.sluice.Store;
import io.sluice.TokenBucket;
import io.sluice.testkit.ManualClock;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class SluiceMetricsTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final SluiceMetrics metrics = new SluiceMetrics(registry);

    @Test
    void countsDecisionsByRuleDecidingLimitOutcomeAndSource() {
        Rule rule = Rule.of("api", FixedWindow.of(3, Duration.ofSeconds(1)).named("second"),
                TokenBucket.of(100, 1, Duration.ofSeconds(1)).named("burst"));
        ManualClock clock = new ManualClock(1_000_000);
        try (RateLimiter limiter = RateLimiter.builder(rule).store(Store.memory().clock(clock).build())
                .listener(metrics).build()) {
            for (int i = 0; i < 5; i++) {
                limiter.tryAcquire("k");
            }
            limiter.tryAcquireAsync("k", 1).join();
        }
        assertThat(count("api", "second", "allowed", "store")).isEqualTo(3);
        assertThat(count("api", "second", "rejected", "store")).isEqualTo(3);
        assertThat(registry.find("sluice.limiter.decisions").tag("limit", "burst").counter()).isNull();
    }

    @Test
    void countsTierDecisionsByTierNameNeverByKey() {
        Rule rule = Rule.of("api", FixedWindow.of(1, Duration.ofSeconds(1))).withTiers(
                io.sluice.Tier.named("premium").keys("tenant-*").limits(FixedWindow.of(2, Duration.ofSeconds(1))),
                io.sluice.Tier.named("blocked").keys("evil").blocked());
        try (RateLimiter limiter = RateLimiter.builder(rule).store(Store.memory().clock(new ManualClock(1_000_000))
                .build()).listener(metrics).build()) {
            for (String key : new String[] {"tenant-1", "tenant-1", "tenant-1", "tenant-2", "evil", "other"}) {
                limiter.tryAcquire(key);
            }
        }
        assertThat(registry.get("sluice.limiter.tiers").tags("rule", "api", "tier", "premium", "outcome", "allowed")
                .counter().count()).isEqualTo(3);
        assertThat(registry.get("sluice.limiter.tiers").tags("tier", "premium", "outcome", "rejected").counter()
                .count()).isEqualTo(1);
        assertThat(registry.get("sluice.limiter.tiers").tags("tier", "blocked").counter().count()).isEqualTo(1);
        assertThat(registry.find("sluice.limiter.tiers").counters()).hasSize(3);
    }

    @Test
    void countsLockoutsThatBeganOncePerLockoutNotPerRejectionDuringIt() {
        // A limit of 1 a second; 2 rejections within a minute lock the key out for an hour.
        Rule rule = Rule.of("login", FixedWindow.of(1, Duration.ofSeconds(1)))
                .withLockout(io.sluice.Lockout.of(2, Duration.ofMinutes(1), Duration.ofHours(1)));
        ManualClock clock = new ManualClock(1_000_000);
        try (RateLimiter limiter = RateLimiter.builder(rule).store(Store.memory().clock(clock).build())
                .listener(metrics).build()) {
            limiter.tryAcquire("a");
            limiter.tryAcquire("a");                       // rejected by the limit: 1
            clock.advanceMicros(10);
            assertThat(limiter.tryAcquire("a").lockedOut()).isTrue();   // 2: locked out
            for (int i = 0; i < 3; i++) {
                clock.advanceMicros(1_000);
                assertThat(limiter.tryAcquire("a").lockedOut()).isTrue();
            }
            assertThat(lockouts("login")).isEqualTo(1);
            clock.advanceMicros(Duration.ofHours(1).toNanos() / 1_000);
            limiter.tryAcquire("a");
            limiter.tryAcquire("a");
            limiter.tryAcquire("a");                       // the next lockout of the key
            limiter.tryAcquire("b");
            limiter.tryAcquire("b");
        }
        assertThat(lockouts("login")).isEqualTo(2);
        // The rejections while locked out are decisions of limit "lockout".
        assertThat(registry.get("sluice.limiter.decisions").tags("rule", "login", "limit", "lockout").counter()
                .count()).isEqualTo(5);
    }

    @Test
    void aRuleWithoutALockoutHasNoLockoutMeter() {
        Rule rule = Rule.of("plain", FixedWindow.of(1, Duration.ofSeconds(1)));
        try (RateLimiter limiter = RateLimiter.builder(rule).store(Store.memory().build()).listener(metrics)
                .build()) {
            limiter.tryAcquire("k");
            limiter.tryAcquire("k");
        }
        assertThat(registry.find("sluice.limiter.lockouts").counters()).isEmpty();
    }

    private double lockouts(String rule) {
        return registry.get("sluice.limiter.lockouts").tag("rule", rule).counter().count();
    }

    @Test
    void tagsDecisionsMadeUnderAFailurePolicyWithTheirSource() {
        Rule rule = Rule.of("api", FixedWindow.of(3, Duration.ofSeconds(1)));
        metrics.onDecision(rule, "user:1", new Decision(true, 1, 0, 0, 0, 0, "fixed_window", Decision.NO_LEASE)
                .withSource(Decision.Source.FAIL_OPEN));
        assertThat(count("api", "fixed_window", "allowed", "fail_open")).isEqualTo(1);
        assertThat(count("api", "fixed_window", "allowed", "store")).isZero();
    }

    @Test
    void countsDenialsARedisStoreRepeatedWithoutARoundTripUnderSourceCached() {
        Rule rule = Rule.of("login", TokenBucket.of(10, 10, Duration.ofSeconds(1)));
        Decision denied = new Decision(false, 0, 0, 40_000, 1_000_000, 0, "token_bucket", Decision.NO_LEASE);
        metrics.onDecision(rule, "user:2", denied);
        metrics.onDecision(rule, "user:2", denied.withSource(Decision.Source.CACHED));
        metrics.onDecision(rule, "user:2", denied.withSource(Decision.Source.CACHED));
        assertThat(count("login", "token_bucket", "rejected", "cached")).isEqualTo(2);
        assertThat(count("login", "token_bucket", "rejected", "store")).isEqualTo(1);
    }

    @Test
    void keysNeverBecomeTags() {
        Rule rule = Rule.of("api", FixedWindow.of(3, Duration.ofSeconds(1)));
        Decision allowed = new Decision(true, 1, 2, 0, 0, 0, "fixed_window", Decision.NO_LEASE);
        for (int i = 0; i < 1_000; i++) {
            metrics.onDecision(rule, "user:" + i, allowed);
        }
        assertThat(registry.find("sluice.limiter.decisions").counters()).hasSize(1);
        assertThat(count("api", "fixed_window", "allowed", "store")).isEqualTo(1_000);
    }

    @Test
    void timesStoreCallsByOperationAndOutcome() {
        metrics.onStoreCall("decide", 2_000_000, null);
        metrics.onStoreCall("decide", 4_000_000, null);
        metrics.onStoreCall("decide", 100_000_000, new RuntimeException("timeout"));
        var ok = registry.get("sluice.store.calls").tags("operation", "decide", "outcome", "success").timer();
        assertThat(ok.count()).isEqualTo(2);
        assertThat(ok.totalTime(TimeUnit.MILLISECONDS)).isEqualTo(6.0);
        assertThat(registry.get("sluice.store.calls").tags("operation", "decide", "outcome", "error").timer().count())
                .isEqualTo(1);
    }

    @Test
    void followsTheBreakerState() {
        var gauge = registry.get("sluice.breaker.state").gauge();
        assertThat(gauge.value()).isZero();
        metrics.onBreakerTransition(BreakerState.CLOSED, BreakerState.OPEN, "timeout");
        assertThat(gauge.value()).isEqualTo(2);
        metrics.onBreakerTransition(BreakerState.OPEN, BreakerState.HALF_OPEN, "cool-down over");
        assertThat(gauge.value()).isEqualTo(1);
        metrics.onBreakerTransition(BreakerState.HALF_OPEN, BreakerState.CLOSED, "probe succeeded");
        assertThat(gauge.value()).isZero();
        assertThat(registry.get("sluice.breaker.transitions").tag("to", "open").counter().count()).isEqualTo(1);
    }

    @Test
    void countsLeasesAndSyncs() {
        Rule rule = Rule.of("hot", FixedWindow.of(1000, Duration.ofSeconds(1)));
        metrics.onLease(rule, 64, 64);
        metrics.onLease(rule, 64, 10);
        assertThat(registry.get("sluice.lease.calls").tag("rule", "hot").counter().count()).isEqualTo(2);
        assertThat(registry.get("sluice.lease.permits").tags("rule", "hot", "kind", "requested").counter().count())
                .isEqualTo(128);
        assertThat(registry.get("sluice.lease.permits").tags("rule", "hot", "kind", "granted").counter().count())
                .isEqualTo(74);
        metrics.onSync(12, 300, 1_000_000, null);
        metrics.onSync(3, 0, 5_000_000, new RuntimeException("down"));
        assertThat(registry.get("sluice.sync.rounds").tag("outcome", "success").timer().count()).isEqualTo(1);
        assertThat(registry.get("sluice.sync.rounds").tag("outcome", "error").timer().count()).isEqualTo(1);
        assertThat(registry.get("sluice.sync.keys").summary().totalAmount()).isEqualTo(15);
        assertThat(registry.get("sluice.sync.pushed").counter().count()).isEqualTo(300);
    }

    @Test
    void refusesANullRegistry() {
        assertThatThrownBy(() -> new SluiceMetrics(null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("registry");
    }

    private double count(String rule, String limit, String outcome, String source) {
        var c = registry.find("sluice.limiter.decisions")
                .tags("rule", rule, "limit", limit, "outcome", outcome, "source", source).counter();
        return c == null ? 0 : c.count();
    }
}
