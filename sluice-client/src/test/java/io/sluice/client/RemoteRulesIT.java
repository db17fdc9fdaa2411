package io.sluice.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.Decision;
import io.sluice.FailurePolicy;
import io.sluice.FixedWindow;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.SlidingLog;
import io.sluice.Tier;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * How rules are known to both sides, against a real server process with rule files and a token: a rule the
 * files define is used by the client under the same definition (and shares its keys with the server's own
 * API); a different definition of that name is refused with an error naming the rule; the token is required.
 */
class RemoteRulesIT {

    private static final String TOKEN = "s3cret-token";
    private static ServeProcess server;

    @BeforeAll
    static void startServer() {
        server = ServeProcess.start("--store", "memory", "--token", TOKEN, "--rules", ServeProcess.ruleFile(String.join(
                "\n",
                "limits:",
                "  login_attempts: {algorithm: sliding_log, limit: 3, window: 1m}",
                "  per_minute: {algorithm: fixed_window, limit: 2, window: 1m}",
                "  premium_per_minute: {algorithm: fixed_window, limit: 5, window: 1m}",
                "rules:",
                "  login: {limits: [login_attempts]}",
                "  api:",
                "    limits: [per_minute]",
                "    tiers:",
                "      premium: {keys: [\"tenant-big-*\"], limits: [premium_per_minute]}",
                "      internal: {keys: [svc-a], unlimited: true}",
                "")).toString());
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    private static RemoteStore store(String token) {
        // Generous: these tests are about answers, not about timeouts (a cold server on a loaded machine is slow).
        return RemoteStore.builder().uri(server.uri()).token(token).timeout(Duration.ofSeconds(30)).build();
    }

    @Test
    void theServersRuleUnderTheSameDefinitionIsDecidedThere() {
        Rule login = Rule.of("login", SlidingLog.of(3, Duration.ofMinutes(1)).named("login_attempts"));
        try (RemoteStore store = store(TOKEN); RateLimiter limiter = RateLimiter.builder(login).store(store).build()) {
            assertThat(limiter.tryAcquire("user:1").remaining()).isEqualTo(2);
            assertThat(limiter.tryAcquire("user:1", 2).allowed()).isTrue();
            Decision rejected = limiter.tryAcquire("user:1");
            assertThat(rejected.allowed()).isFalse();
            assertThat(rejected.limit()).isEqualTo("login_attempts");
        }
    }

    @Test
    void aDifferentDefinitionOfAServerRuleIsRefusedNamingTheRule() {
        Rule other = Rule.of("login", SlidingLog.of(30, Duration.ofMinutes(1)).named("login_attempts"))
                .withFailurePolicy(FailurePolicy.failOpen());
        try (RemoteStore store = store(TOKEN); RateLimiter limiter = RateLimiter.builder(other).store(store).build()) {
            // Not an outage: the policy does not hide it, and nothing is decided.
            assertThatThrownBy(() -> limiter.tryAcquire("user:2")).isInstanceOf(RuleMismatchException.class)
                    .hasMessageContaining("rule 'login' differs from the server's rule files")
                    .hasMessageContaining("\"limit\":30").hasMessageContaining("\"limit\":3,");
            assertThatThrownBy(() -> limiter.tryAcquireAsync("user:2", 1).join())
                    .hasCauseInstanceOf(RuleMismatchException.class);
        }
    }

    /** The server's tiered rule "api", as a client defines it. */
    private static Rule api(int premiumLimit, String premiumKeys) {
        return Rule.of("api", FixedWindow.of(2, Duration.ofMinutes(1)).named("per_minute")).withTiers(
                Tier.named("premium").keys(premiumKeys)
                        .limits(FixedWindow.of(premiumLimit, Duration.ofMinutes(1)).named("premium_per_minute")),
                Tier.named("internal").keys("svc-a").unlimited());
    }

    @Test
    void theServersTieredRuleUnderTheSameDefinitionDecidesEachKeyByItsTier() {
        try (RemoteStore store = store(TOKEN);
             RateLimiter limiter = RateLimiter.builder(api(5, "tenant-big-*")).store(store).build()) {
            for (int i = 0; i < 5; i++) {
                assertThat(limiter.tryAcquire("tenant-big-1").allowed()).as("premium permit " + i).isTrue();
            }
            Decision sixth = limiter.tryAcquire("tenant-big-1");
            assertThat(sixth.allowed()).isFalse();
            assertThat(sixth.limit()).isEqualTo("premium_per_minute");
            assertThat(sixth.tier()).isEqualTo("premium");
            assertThat(limiter.tryAcquire("tenant-small", 2).allowed()).isTrue();
            assertThat(limiter.tryAcquire("tenant-small").limit()).isEqualTo("per_minute");
            assertThat(limiter.tryAcquire("svc-a", 100).tier()).isEqualTo("internal");
        }
    }

    @Test
    void aDifferentTierOfAServerRuleIsRefusedForEveryKeyNamingTheRule() {
        // Other keys in the premium tier: the rule's own keys are refused too, since its fingerprint covers tiers.
        try (RemoteStore store = store(TOKEN);
             RateLimiter limiter = RateLimiter.builder(api(5, "tenant-huge-*")).store(store).build()) {
            assertThatThrownBy(() -> limiter.tryAcquire("tenant-small")).isInstanceOf(RuleMismatchException.class)
                    .hasMessageContaining("rule 'api' differs from the server's rule files")
                    .hasMessageContaining("tenant-huge-*");
        }
        // Another limit in the tier: its keys are refused naming the tier.
        try (RemoteStore store = store(TOKEN);
             RateLimiter limiter = RateLimiter.builder(api(50, "tenant-big-*")).store(store).build()) {
            assertThatThrownBy(() -> limiter.tryAcquire("tenant-big-2")).isInstanceOf(RuleMismatchException.class)
                    .hasMessageContaining("rule 'api' differs from the server's rule files in its tier 'premium'")
                    .hasMessageContaining("\"limit\":50");
        }
        // The rule without tiers: refused, not decided by the rule's limits alone.
        Rule untiered = Rule.of("api", FixedWindow.of(2, Duration.ofMinutes(1)).named("per_minute"));
        try (RemoteStore store = store(TOKEN);
             RateLimiter limiter = RateLimiter.builder(untiered).store(store).build()) {
            assertThatThrownBy(() -> limiter.tryAcquire("tenant-big-3")).isInstanceOf(RuleMismatchException.class)
                    .hasMessageContaining("\"tiers\"");
        }
    }

    @Test
    void aClientsOwnTieredRuleKeepsEachTiersStateApart() {
        Rule own = Rule.of("client-tiers", FixedWindow.of(1, Duration.ofMinutes(1)).named("base"))
                .withTiers(Tier.named("gold").keys("gold-*").limits(FixedWindow.of(3, Duration.ofMinutes(1))
                        .named("gold_limit")));
        try (RemoteStore store = store(TOKEN); RateLimiter limiter = RateLimiter.builder(own).store(store).build()) {
            assertThat(limiter.tryAcquire("gold-1", 3).allowed()).isTrue();
            Decision gold = limiter.tryAcquire("gold-1");
            assertThat(gold.allowed()).isFalse();
            assertThat(gold.limit()).isEqualTo("gold_limit");
            assertThat(limiter.tryAcquire("plain").allowed()).isTrue();
            assertThat(limiter.tryAcquire("plain").limit()).isEqualTo("base");
        }
    }

    @Test
    void theServersOwnNamespacesAreRefused() {
        Rule envoyLike = Rule.of("rls:domain_key", FixedWindow.of(1, Duration.ofSeconds(1)));
        try (RemoteStore store = store(TOKEN);
             RateLimiter limiter = RateLimiter.builder(envoyLike).store(store).build()) {
            assertThatThrownBy(() -> limiter.tryAcquire("k")).isInstanceOf(RemoteStoreException.class)
                    .hasMessageContaining("400").hasMessageContaining("rls:");
        }
    }

    @Test
    void withoutTheTokenNothingIsDecided() {
        Rule rule = Rule.of("client-own", FixedWindow.of(1, Duration.ofSeconds(1)));
        try (RemoteStore store = store(null); RateLimiter limiter = RateLimiter.builder(rule).store(store).build()) {
            assertThatThrownBy(() -> limiter.tryAcquire("k")).isInstanceOf(RemoteStoreException.class)
                    .isNotInstanceOf(RemoteUnavailableException.class).hasMessageContaining("401");
        }
        try (RemoteStore store = store("wrong-token");
             RateLimiter limiter = RateLimiter.builder(rule).store(store).build()) {
            assertThatThrownBy(() -> limiter.tryAcquire("k")).hasMessageContaining("401");
        }
    }

    @Test
    void theServerRefusesAClientClockItWasNotStartedToAccept() {
        Rule rule = Rule.of("client-clock", FixedWindow.of(1, Duration.ofSeconds(1)));
        try (RemoteStore store = RemoteStore.builder().uri(server.uri()).token(TOKEN).clock(() -> 42L)
                .timeout(Duration.ofSeconds(30)).build();
             RateLimiter limiter = RateLimiter.builder(rule).store(store).build()) {
            assertThatThrownBy(() -> limiter.tryAcquire("k")).isInstanceOf(RemoteStoreException.class)
                    .hasMessageContaining("now_us").hasMessageContaining("--clock client");
        }
    }
}
