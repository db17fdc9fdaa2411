package io.sluice.rules;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.Concurrency;
import io.sluice.FailurePolicy;
import io.sluice.FixedWindow;
import io.sluice.Gcra;
import io.sluice.LeakyBucket;
import io.sluice.Mode;
import io.sluice.RefreshPeriod;
import io.sluice.RollingWindow;
import io.sluice.Rule;
import io.sluice.SlidingLog;
import io.sluice.SlidingWindow;
import io.sluice.SmoothBursty;
import io.sluice.SmoothWarmingUp;
import io.sluice.Tier;
import io.sluice.TokenBucket;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class RuleTextTest {

    /** Tiers of every kind, a tier sharing the rule's limit, a shadow limit and a lockout the tiers inherit. */
    private static final Rule TIERED = Rule.of("api", FixedWindow.of(50, Duration.ofMinutes(1)).named("per_minute"),
                    Gcra.of(7, Duration.ofSeconds(1)).named("burst"))
            .withShadow("burst").withMode(Mode.exact())
            .withLockout(io.sluice.Lockout.of(3, Duration.ofMinutes(15), Duration.ofHours(1)))
            .withTiers(
                    Tier.named("premium").keys("tenant-acme", "tenant-big-*")
                            .limits(FixedWindow.of(500, Duration.ofMinutes(1)).named("premium_per_minute"),
                                    Gcra.of(7, Duration.ofSeconds(1)).named("burst")),
                    Tier.named("internal").keys("svc-*").unlimited(),
                    Tier.named("blocked").keys("tenant-evil", "a\\*b").blocked());

    private static final List<Rule> RULES = List.of(
            Rule.of("fw", FixedWindow.of(3, Duration.ofSeconds(1)).withCountRejected(true)),
            Rule.of("sl", SlidingLog.of(5, Duration.ofMinutes(1)).withMinGap(Duration.ofNanos(1_500_000))),
            Rule.of("sw", SlidingWindow.of(10, Duration.ofSeconds(1))),
            Rule.of("rw", RollingWindow.of(10, Duration.ofSeconds(1), Duration.ofMillis(100))),
            Rule.of("tb", TokenBucket.of(10, 3, Duration.ofMillis(1500)).withInitialTokens(2)),
            Rule.of("gcra", Gcra.of(7, Duration.ofSeconds(1)).withBurst(3)),
            Rule.of("lb", LeakyBucket.of(1, Duration.ofSeconds(1)).withBurst(5).withNodelay(true)),
            Rule.of("sb", SmoothBursty.of(0.1 + 0.2)),
            Rule.of("swu", SmoothWarmingUp.of(2.0, Duration.ofMillis(4000))),
            Rule.of("rp", RefreshPeriod.of(2, Duration.ofSeconds(1))),
            Rule.of("c", Concurrency.of(2, Duration.ofSeconds(10))),
            Rule.of("two", FixedWindow.of(50, Duration.ofMinutes(1)), TokenBucket.of(30, 10, Duration.ofSeconds(10)))
                    .withMode(Mode.leased().withLeaseTtl(Duration.ofMillis(250)).withMaxBatch(4))
                    .withFailurePolicy(FailurePolicy.localFallback(0.5)),
            Rule.of("synced", FixedWindow.of(100, Duration.ofMinutes(1))).withMode(Mode.synced(Duration.ofMillis(50)))
                    .withFailurePolicy(FailurePolicy.failOpen()),
            Rule.of("coalesced", Gcra.of(7, Duration.ofSeconds(1))).withMode(Mode.coalesced())
                    .withFailurePolicy(FailurePolicy.failClosed()),
            Rule.of("shadowed", FixedWindow.of(50, Duration.ofMinutes(1)), Gcra.of(7, Duration.ofSeconds(1)))
                    .withShadow("gcra"),
            Rule.of("watching", Gcra.of(7, Duration.ofSeconds(1))).asShadow(),
            Rule.of("login", FixedWindow.of(5, Duration.ofMinutes(1)))
                    .withLockout(io.sluice.Lockout.of(3, Duration.ofMinutes(15), Duration.ofHours(1))),
            TIERED,
            TIERED.ruleFor("tenant-acme"));

    @Test
    void everyRuleReadsBackEqual() throws RuleFileException {
        for (Rule rule : RULES) {
            String text = RuleText.of(rule);
            assertThat(RuleText.parse("test", text)).as(text).isEqualTo(rule);
            assertThat(RuleText.of(RuleText.parse("test", text))).isEqualTo(text);
        }
    }

    @Test
    void fingerprintsTellRulesApartAndEqualRulesAlike() {
        Rule a = Rule.of("r", FixedWindow.of(3, Duration.ofSeconds(1)));
        Rule same = Rule.of("r", FixedWindow.of(3, Duration.ofSeconds(1)));
        assertThat(RuleText.fingerprint(a)).hasSize(16).isEqualTo(RuleText.fingerprint(same));
        assertThat(RuleText.fingerprint(a)).isNotEqualTo(RuleText.fingerprint(
                Rule.of("r", FixedWindow.of(4, Duration.ofSeconds(1)))));
        assertThat(RuleText.fingerprint(a)).isNotEqualTo(RuleText.fingerprint(
                a.withFailurePolicy(FailurePolicy.failOpen())));
        assertThat(RuleText.fingerprint(a)).isNotEqualTo(RuleText.fingerprint(
                Rule.of("r2", FixedWindow.of(3, Duration.ofSeconds(1)))));
    }

    @Test
    void tiersAreInTheTextAndTheFingerprint() throws RuleFileException {
        String text = RuleText.of(TIERED);
        assertThat(text).contains("\"tiers\":{\"premium\":{\"keys\":[\"tenant-acme\",\"tenant-big-*\"],"
                + "\"limits\":[\"premium_per_minute\",\"burst\"]}");
        Rule untiered = RuleText.parse("test", text.replace(text.substring(text.indexOf(",\"tiers\"")),
                "}}}"));
        assertThat(untiered.hasTiers()).isFalse();
        assertThat(RuleText.fingerprint(untiered)).isNotEqualTo(RuleText.fingerprint(TIERED));
        Rule otherKeys = TIERED.withTiers(Tier.named("premium").keys("tenant-acme")
                .limits(FixedWindow.of(500, Duration.ofMinutes(1)).named("premium_per_minute")));
        assertThat(RuleText.fingerprint(otherKeys)).isNotEqualTo(RuleText.fingerprint(TIERED));
    }

    @Test
    void aTiersRuleTravelsUnderItsParentsNameAndItsTiersName() throws RuleFileException {
        Rule premium = TIERED.tierRule("premium");
        String text = RuleText.of(premium);
        assertThat(text).contains("\"rules\":{\"api\":").endsWith(",\"tier\":\"premium\"}")
                .doesNotContain("\uFFFF");
        Rule back = RuleText.parse("test", text);
        assertThat(back).isEqualTo(premium);
        assertThat(back.name()).isEqualTo(premium.name());
        assertThat(back.tierOf()).containsExactly("api", "premium");
        assertThat(back.isShadow("burst")).isTrue();
        assertThat(back.lockout()).isEqualTo(TIERED.lockout());
        // The rule's own fingerprint and its tier's differ, so a server tells which one a call names.
        assertThat(RuleText.fingerprint(premium)).isNotEqualTo(RuleText.fingerprint(TIERED));
    }

    @Test
    void twoDifferentLimitsOfOneNameAreRefusedNamingTheTier() {
        Rule clash = Rule.of("api", FixedWindow.of(50, Duration.ofMinutes(1)).named("per_minute"))
                .withTiers(Tier.named("premium").keys("tenant-acme")
                        .limits(FixedWindow.of(500, Duration.ofMinutes(1)).named("per_minute")));
        assertThatThrownBy(() -> RuleText.of(clash)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("tier 'premium'").hasMessageContaining("'per_minute'")
                .hasMessageContaining("Limit.named");
    }

    @Test
    void aTierMemberThatIsNotANameIsRefused() {
        String text = RuleText.of(Rule.of("x", Gcra.of(1, Duration.ofSeconds(1)))).replaceFirst("}$",
                ",\"tier\":3}");
        assertThatThrownBy(() -> RuleText.parse("sent", text)).isInstanceOf(RuleFileException.class)
                .hasMessageContaining("tier").hasMessageContaining("expected the name of a tier");
    }

    @Test
    void aTextOfSeveralRulesIsRefused() {
        String two = "{\"limits\": {\"a\": {\"algorithm\": \"gcra\", \"limit\": 1, \"period\": \"1s\"}},"
                + " \"rules\": {\"x\": {\"limits\": [\"a\"]}, \"y\": {\"limits\": [\"a\"]}}}";
        assertThatThrownBy(() -> RuleText.parse("sent", two)).isInstanceOf(RuleFileException.class)
                .hasMessageContaining("exactly one rule");
    }
}
