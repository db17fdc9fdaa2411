package io.sluice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Tiers as values: key patterns, first-match lookup, and the errors of tiers that cannot work. */
class TierTest {

    private static final Limit SMALL = FixedWindow.of(2, Duration.ofMinutes(1)).named("small");
    private static final Limit LARGE = FixedWindow.of(20, Duration.ofMinutes(1)).named("large");

    @Test
    void patternsMatchExactKeysAndGlobs() {
        Tier t = Tier.named("t").keys("exact", "tenant-*", "*-eu-*-x", "lit\\*eral", "back\\\\slash").unlimited();
        assertThat(t.matches("exact")).isTrue();
        assertThat(t.matches("exactly")).isFalse();
        assertThat(t.matches("tenant-")).isTrue();
        assertThat(t.matches("tenant-42")).isTrue();
        assertThat(t.matches("xtenant-42")).isFalse();
        assertThat(t.matches("a-eu-b-x")).isTrue();
        assertThat(t.matches("-eu--x")).isTrue();
        assertThat(t.matches("a-eu-x")).isFalse();
        assertThat(t.matches("lit*eral")).isTrue();
        assertThat(t.matches("litteral")).isFalse();
        assertThat(t.matches("back\\slash")).isTrue();
        assertThat(t.keys()).containsExactly("exact", "tenant-*", "*-eu-*-x", "lit\\*eral", "back\\\\slash");
    }

    @Test
    void theFirstMatchingTierDecidesAndTheRulesOwnLimitsTheRest() {
        Rule rule = Rule.of("api", SMALL).withTiers(
                Tier.named("a").keys("k-*").limits(LARGE),
                Tier.named("b").keys("z", "*-1").blocked());
        assertThat(rule.tierFor("k-1").name()).isEqualTo("a");
        assertThat(rule.tierFor("z").name()).isEqualTo("b");
        assertThat(rule.tierFor("y")).isNull();
        assertThat(rule.ruleFor("y")).isSameAs(rule);
        assertThat(rule.ruleFor("z")).isNull();
        assertThat(rule.ruleFor("k-9").limits()).containsExactly(LARGE);
        assertThat(rule.ruleFor("k-9").name()).isEqualTo("api\uFFFFa");
        assertThat(rule.stateRules()).hasSize(2);
    }

    @Test
    void tiersOfScopedKeysMatchThePartAfterTheSeparatorWhileStateKeepsTheWholeKey() {
        Rule plain = Rule.of("api", SMALL).withTiers(
                Tier.named("a").keys("k-1", "k-*").limits(LARGE),
                Tier.named("b").keys("svc-*").unlimited());
        Rule scoped = plain.withTierKeysAfter('\u001f');
        assertThat(plain.tierKeysAfter()).isEqualTo(-1);
        assertThat(scoped.tierKeysAfter()).isEqualTo(0x1f);
        assertThat(scoped).isNotEqualTo(plain);
        assertThat(scoped.withMode(Mode.exact()).tierKeysAfter()).as("copies keep it").isEqualTo(0x1f);
        assertThat(plain.tierFor("acme\u001fk-1")).as("the joined key matches nothing").isNull();
        assertThat(plain.tierFor("svc-x\u001fuser").name()).as("a glob would match the scope").isEqualTo("b");
        assertThat(scoped.tierFor("acme\u001fk-1").name()).isEqualTo("a");
        assertThat(scoped.tierFor("acme\u001fk-9").name()).isEqualTo("a");
        assertThat(scoped.tierFor("svc-x\u001fuser")).as("the scope is not the key").isNull();
        assertThat(scoped.tierFor("k-1").name()).as("a key without a scope is matched whole").isEqualTo("a");
        assertThat(scoped.ruleFor("acme\u001fk-9").name()).isEqualTo("api\uFFFFa");
        assertThat(scoped.ruleFor("acme\u001fuser")).isSameAs(scoped);
        assertThat(scoped.ruleFor("acme\u001fsvc-1")).isNull();
    }

    @Test
    void badTiersAreRefusedNamingTheField() {
        assertThatThrownBy(() -> Tier.named("t").keys().unlimited())
                .hasMessage("keys of tier 't' must hold at least one key or pattern");
        assertThatThrownBy(() -> Tier.named("t").keys("a", "").unlimited())
                .hasMessage("keys[1] of tier 't' must be a non-empty key or pattern");
        assertThatThrownBy(() -> Tier.named("t").keys("a\\b").unlimited())
                .hasMessageContaining("keys[0] of tier 't' 'a\\b' has a backslash at index 1");
        assertThatThrownBy(() -> Tier.named("t").keys("x".repeat(513) + "*").unlimited())
                .hasMessageContaining("can never match: every key it matches would be longer than 512");
        assertThatThrownBy(() -> Tier.named("t").keys("a", "a").unlimited())
                .hasMessage("keys[1] of tier 't' repeats 'a'");
        assertThatThrownBy(() -> Tier.named("t").limits(SMALL))
                .hasMessageContaining("keys of tier 't' must be given before");
        assertThatThrownBy(() -> Tier.named("t").keys("a").limits())
                .hasMessageContaining("limits of tier 't' must hold at least one limit");
        assertThatThrownBy(() -> Tier.named("t").keys("a").limits(SMALL, SMALL))
                .hasMessageContaining("limits of tier 't': limit names");
        assertThatThrownBy(() -> Tier.named(""))
                .hasMessage("tier name must be a non-empty string");
    }

    @Test
    void tiersThatCanNeverApplyAreRefused() {
        Rule rule = Rule.of("api", SMALL);
        assertThatThrownBy(() -> rule.withTiers(Tier.named("a").keys("x").blocked(),
                Tier.named("a").keys("y").blocked()))
                .hasMessageContaining("tiers[1] ('a') of rule 'api': tier names must be unique");
        assertThatThrownBy(() -> rule.withTiers(Tier.named("all").keys("*").unlimited(),
                Tier.named("b").keys("y").blocked()))
                .hasMessage("tiers[1] ('b') of rule 'api' can never apply: tier 'all' before it matches every key");
        assertThatThrownBy(() -> rule.withTiers(Tier.named("a").keys("t-*").unlimited(),
                Tier.named("b").keys("t-1").blocked()))
                .hasMessage("tiers[1] ('b') of rule 'api': key 't-1' can never apply here: tier 'a' (pattern 't-*')"
                        + " before it matches it first");
        assertThatThrownBy(() -> rule.withTiers(Tier.named("a").keys("t-1").unlimited(),
                Tier.named("b").keys("t-1").blocked()))
                .hasMessageContaining("key 't-1' can never apply here: tier 'a' before it");
        assertThatThrownBy(() -> rule.withMode(Mode.leased()).withTiers(
                Tier.named("c").keys("t").limits(Concurrency.of(1, Duration.ofSeconds(1)))))
                .hasMessageStartingWith("tiers[0] ('c') of rule 'api': ");
    }

    @Test
    void ruleNamesMayNotHoldTheTierSeparator() {
        assertThatThrownBy(() -> Rule.of("a\uFFFFb", SMALL)).hasMessageContaining("U+FFFF");
    }

    @Test
    void copiesKeepTiersAndAChangedLimitReachesTheTiersThatHoldIt() {
        Rule rule = Rule.of("api", SMALL).withTiers(Tier.named("p").keys("p-*").limits(LARGE));
        assertThat(rule.withMode(Mode.coalesced()).tiers()).isEqualTo(rule.tiers());
        Limit larger = FixedWindow.of(30, Duration.ofMinutes(1)).named("large");
        Rule changed = rule.withLimit(larger);
        assertThat(changed.limits()).containsExactly(SMALL);
        assertThat(changed.ruleFor("p-1").limits()).containsExactly(larger);
        assertThat(changed).isNotEqualTo(rule);
        assertThat(rule.withShadow("small").ruleFor("p-1").shadow()).isEmpty();
        assertThat(rule.withTiers().hasTiers()).isFalse();
    }
}
