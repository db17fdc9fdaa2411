package io.sluice.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.Concurrency;
import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.Limit;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.SluiceListener;
import io.sluice.Tier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Per-key tiers against a store, unchanged for every store that extends it (memory, Redis): a tier's limits
 * decide its keys with state of their own, unlimited and blocked tiers decide without the store, and a changed
 * rule (a reload) keeps every key's state where its tier's limits are unchanged. Time is a {@link ManualClock}
 * the store reads. Each test uses a fresh rule name, so stores may be shared between tests.
 */
public abstract class TierContract extends StoreFixture {

    private RateLimiter limiter(Rule rule) {
        return limiterFor(rule, SluiceListener.NONE);
    }

    private static final Duration MINUTE = Duration.ofMinutes(1);

    private static Limit perMinute(String name, long limit) {
        return FixedWindow.of(limit, MINUTE).named(name);
    }

    /** The worked example of the reference: a premium tenant, an internal caller, a blocked caller. */
    private static Rule api(String name, long premium) {
        return Rule.of(name, perMinute("per_minute", 2)).withTiers(
                Tier.named("premium").keys("tenant-acme", "tenant-big-*").limits(perMinute("premium_per_minute", premium)),
                Tier.named("internal").keys("svc-*").unlimited(),
                Tier.named("blocked").keys("tenant-evil").blocked());
    }

    private static String fresh() {
        return "tiers-" + UUID.randomUUID();
    }

    private static long admitted(RateLimiter limiter, String key, int attempts) {
        long n = 0;
        for (int i = 0; i < attempts; i++) {
            n += limiter.tryAcquire(key).allowed() ? 1 : 0;
        }
        return n;
    }

    @Test
    void eachTierDecidesItsKeysAndTheDecisionNamesIt() {
        RateLimiter limiter = limiter(api(fresh(), 5));
        assertThat(admitted(limiter, "tenant-small", 10)).isEqualTo(2);
        assertThat(admitted(limiter, "tenant-acme", 10)).isEqualTo(5);
        assertThat(admitted(limiter, "tenant-big-1", 10)).isEqualTo(5);
        assertThat(admitted(limiter, "svc-billing", 100)).isEqualTo(100);
        assertThat(admitted(limiter, "tenant-evil", 3)).isZero();

        Decision plain = limiter.tryAcquire("tenant-small");
        assertThat(plain.tier()).isNull();
        assertThat(plain.limit()).isEqualTo("per_minute");
        Decision premium = limiter.tryAcquire("tenant-acme");
        assertThat(premium.tier()).isEqualTo("premium");
        assertThat(premium.limit()).isEqualTo("premium_per_minute");
        assertThat(premium.allowed()).isFalse();

        Decision internal = limiter.tryAcquire("svc-billing", 7);
        assertThat(internal.allowed()).isTrue();
        assertThat(internal.granted()).isEqualTo(7);
        assertThat(internal.remaining()).isEqualTo(Limit.MAX_COUNT);
        assertThat(internal.tier()).isEqualTo("internal");
        assertThat(internal.limit()).isEqualTo("internal");
        assertThat(limiter.peek("svc-billing", 1).granted()).isZero();

        Decision blocked = limiter.tryAcquire("tenant-evil");
        assertThat(blocked.allowed()).isFalse();
        assertThat(blocked.retryAfterMicros()).isEqualTo(Long.MAX_VALUE);
        assertThat(blocked.tier()).isEqualTo("blocked");
        assertThat(blocked.limit()).isEqualTo("blocked");
    }

    @Test
    void theFirstMatchingTierWinsInOrder() {
        Rule rule = Rule.of(fresh(), perMinute("per_minute", 1)).withTiers(
                Tier.named("gold").keys("eu-*").limits(perMinute("gold", 3)),
                Tier.named("silver").keys("*-internal", "us-1").limits(perMinute("silver", 2)));
        RateLimiter limiter = limiter(rule);
        assertThat(limiter.tryAcquire("eu-internal").tier()).isEqualTo("gold");
        assertThat(limiter.tryAcquire("us-internal").tier()).isEqualTo("silver");
        assertThat(limiter.tryAcquire("us-1").tier()).isEqualTo("silver");
        assertThat(limiter.tryAcquire("us-2").tier()).isNull();
        assertThat(admitted(limiter, "eu-internal", 5)).isEqualTo(2);
    }

    @Test
    void stateIsPerRuleTierAndLimitSoAKeyThatChangesTierStartsFreshThereAndFindsItsOldStateBack() {
        String name = fresh();
        Rule before = Rule.of(name, perMinute("per_minute", 2))
                .withTiers(Tier.named("premium").keys("tenant-acme").limits(perMinute("premium_per_minute", 5)));
        // The same rule after a reload that moves tenant-x into premium.
        Rule after = Rule.of(name, perMinute("per_minute", 2))
                .withTiers(Tier.named("premium").keys("tenant-acme", "tenant-x").limits(perMinute("premium_per_minute", 5)));
        RateLimiter v1 = limiter(before);
        assertThat(admitted(v1, "tenant-x", 2)).isEqualTo(2);
        assertThat(admitted(v1, "tenant-y", 1)).isEqualTo(1);
        assertThat(admitted(v1, "tenant-acme", 4)).isEqualTo(4);

        RateLimiter v2 = limiter(after);
        // tenant-x's count under per_minute does not follow it: premium_per_minute has its own state for it.
        assertThat(admitted(v2, "tenant-x", 10)).isEqualTo(5);
        // Other keys keep their state across the change.
        assertThat(admitted(v2, "tenant-y", 10)).isEqualTo(1);
        assertThat(admitted(v2, "tenant-acme", 10)).isEqualTo(1);

        // Back under the old tiers, tenant-x finds its per_minute state again, while it lives.
        assertThat(admitted(limiter(before), "tenant-x", 10)).isZero();
        clock.advance(MINUTE);
        assertThat(admitted(limiter(before), "tenant-x", 10)).isEqualTo(2);
    }

    @Test
    void aReloadThatChangesATiersLimitKeepsItsKeysStateAsTheAlgorithmMigratesIt() {
        String name = fresh();
        RateLimiter v1 = limiter(api(name, 5));
        assertThat(admitted(v1, "tenant-acme", 3)).isEqualTo(3);
        assertThat(admitted(v1, "tenant-small", 1)).isEqualTo(1);
        RateLimiter v2 = limiter(api(name, 8));
        assertThat(admitted(v2, "tenant-acme", 10)).isEqualTo(5);
        assertThat(admitted(v2, "tenant-small", 10)).isEqualTo(1);
    }

    @Test
    void resetForgetsTheKeyInTheRulesLimitsAndEveryTiers() {
        String name = fresh();
        RateLimiter v1 = limiter(api(name, 5));
        assertThat(admitted(v1, "tenant-acme", 5)).isEqualTo(5);
        RateLimiter moved = limiter(Rule.of(name, perMinute("per_minute", 2)));
        assertThat(admitted(moved, "tenant-acme", 2)).isEqualTo(2);
        v1.reset("tenant-acme");
        assertThat(admitted(v1, "tenant-acme", 10)).isEqualTo(5);
        assertThat(admitted(moved, "tenant-acme", 10)).isEqualTo(2);
    }

    @Test
    void permitsAreCheckedAgainstTheLimitsOfTheKeysTier() {
        RateLimiter limiter = limiter(api(fresh(), 50));
        assertThat(limiter.tryAcquire("tenant-acme", 20).allowed()).isTrue();
        assertThatThrownBy(() -> limiter.tryAcquire("tenant-small", 20))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("permits must be in [1, 2]");
        assertThatThrownBy(() -> limiter.tryAcquire("tenant-acme", 51))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("permits must be in [1, 50] for tier 'premium' of rule");
        assertThat(limiter.tryAcquire("svc-a", 1_000).allowed()).isTrue();
    }

    @Test
    void listenersHearTheRuleAndTheTier() {
        List<String> heard = new ArrayList<>();
        SluiceListener listener = new SluiceListener() {
            @Override
            public void onDecision(Rule rule, String key, Decision d) {
                heard.add(rule.name().length() + ":" + key + ":" + d.tier());
            }
        };
        String name = fresh();
        RateLimiter limiter = limiterFor(api(name, 5), listener);
        limiter.tryAcquire("tenant-acme");
        limiter.tryAcquire("svc-a");
        limiter.tryAcquire("other");
        int n = name.length();
        assertThat(heard).containsExactly(n + ":tenant-acme:premium", n + ":svc-a:internal", n + ":other:null");
    }

    @Test
    void severalKeysTogetherDecideUnderEachKeysTier() {
        RateLimiter limiter = limiter(api(fresh(), 5));
        Decision d = limiter.tryAcquireAll(List.of("tenant-acme", "tenant-big-2"), 3);
        assertThat(d.allowed()).isTrue();
        assertThat(d.tier()).isEqualTo("premium");
        // tenant-acme has 2 left: 3 more are refused for both keys, nothing charged.
        assertThat(limiter.tryAcquireAll(List.of("tenant-acme", "tenant-big-2"), 3).allowed()).isFalse();
        assertThat(limiter.tryAcquire("tenant-big-2", 2).allowed()).isTrue();
        Decision mixed = limiter.tryAcquireAll(List.of("svc-a", "tenant-small"), 1);
        assertThat(mixed.allowed()).isTrue();
        assertThat(mixed.tier()).isNull();
        Decision blocked = limiter.tryAcquireAll(List.of("tenant-small", "tenant-evil"), 1);
        assertThat(blocked.allowed()).isFalse();
        assertThat(blocked.tier()).isEqualTo("blocked");
        assertThat(limiter.tryAcquire("tenant-small").remaining()).isZero();
    }

    @Test
    void aTiersConcurrencyLeaseIsReleasedUnderThatTier() {
        Rule rule = Rule.of(fresh(), perMinute("per_minute", 10))
                .withTiers(Tier.named("batch").keys("job-*").limits(Concurrency.of(1, Duration.ofMinutes(5))));
        RateLimiter limiter = limiter(rule);
        Decision first = limiter.tryAcquire("job-1");
        assertThat(first.allowed()).isTrue();
        assertThat(first.lease()).isNotEqualTo(Decision.NO_LEASE);
        assertThat(limiter.tryAcquire("job-1").allowed()).isFalse();
        assertThat(limiter.release("job-1", first.lease())).isTrue();
        assertThat(limiter.tryAcquire("job-1").allowed()).isTrue();
        assertThat(limiter.release("svc-none", 1)).isFalse();
    }
}
