package io.sluice.rules;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.Mode;
import io.sluice.Rule;
import io.sluice.Tier;
import org.junit.jupiter.api.Test;

/** A rule's {@code tiers} in rule files: what they define, and errors that name the field at fault. */
class TierRuleFileTest {

    private static final String LIMITS = "limits:\n"
            + "  per_minute: {algorithm: fixed_window, limit: 100, window: 1m}\n"
            + "  premium_per_minute: {algorithm: fixed_window, limit: 1000, window: 1m}\n"
            + "  jobs: {algorithm: concurrency, max_concurrent: 2, lease_ttl: 1m}\n";

    private static RuleFile parse(String rules) throws RuleFileException {
        return RuleFile.parse("t.yaml", LIMITS + "rules:\n" + rules);
    }

    private static String error(String rules) {
        try {
            parse(rules);
        } catch (RuleFileException e) {
            return e.getMessage();
        }
        throw new AssertionError("expected an error for " + rules);
    }

    @Test
    void tiersAreReadInFileOrder() throws Exception {
        Rule api = parse("  api:\n"
                + "    limits: [per_minute]\n"
                + "    mode: coalesced\n"
                + "    tiers:\n"
                + "      premium: {keys: [tenant-acme, \"tenant-big-*\"], limits: [premium_per_minute]}\n"
                + "      internal: {keys: [\"svc-*\"], unlimited: true}\n"
                + "      blocked: {keys: [tenant-evil], blocked: true, unlimited: false}\n").rules().get("api");
        assertThat(api.tiers()).extracting(Tier::name).containsExactly("premium", "internal", "blocked");
        assertThat(api.tiers()).extracting(Tier::kind)
                .containsExactly(Tier.Kind.LIMITS, Tier.Kind.UNLIMITED, Tier.Kind.BLOCKED);
        assertThat(api.tiers().get(0).keys()).containsExactly("tenant-acme", "tenant-big-*");
        assertThat(api.tierFor("tenant-big-7").name()).isEqualTo("premium");
        assertThat(api.ruleFor("tenant-big-7").limits().get(0).name()).isEqualTo("premium_per_minute");
        assertThat(api.ruleFor("tenant-big-7").mode()).isEqualTo(Mode.coalesced());
        assertThat(api.tierFor("svc-x").kind()).isEqualTo(Tier.Kind.UNLIMITED);
        assertThat(api.tierFor("someone")).isNull();
    }

    @Test
    void badTiersNameTheFieldAtFault() {
        assertThat(error("  api: {limits: [per_minute], tiers: [premium]}\n"))
                .contains("rules.api.tiers: expected a map of tier names");
        assertThat(error("  api: {limits: [per_minute], tiers: {}}\n"))
                .contains("rules.api.tiers: expected at least one tier");
        assertThat(error("  api: {limits: [per_minute], tiers: {p: {keys: [a], limit: [per_minute]}}}\n"))
                .contains("rules.api.tiers.p.limit: unknown field; a tier has keys, limits, unlimited, blocked");
        assertThat(error("  api: {limits: [per_minute], tiers: {p: {limits: [per_minute]}}}\n"))
                .contains("rules.api.tiers.p: missing 'keys'");
        assertThat(error("  api: {limits: [per_minute], tiers: {p: {keys: [a]}}}\n"))
                .contains("rules.api.tiers.p: missing what the tier does");
        assertThat(error("  api: {limits: [per_minute], tiers: {p: {keys: [a], limits: [per_minute], unlimited: true}}}\n"))
                .contains("rules.api.tiers.p.unlimited: a tier has exactly one of 'limits', 'unlimited: true' and"
                        + " 'blocked: true'; this one also has 'limits'");
        assertThat(error("  api: {limits: [per_minute], tiers: {p: {keys: [a], unlimited: true, blocked: true}}}\n"))
                .contains("rules.api.tiers.p.blocked: a tier has exactly one");
        assertThat(error("  api: {limits: [per_minute], tiers: {p: {keys: [a], unlimited: 1}}}\n"))
                .contains("rules.api.tiers.p.unlimited: expected true or false");
        assertThat(error("  api: {limits: [per_minute], tiers: {p: {keys: [a], limits: [nope]}}}\n"))
                .contains("rules.api.tiers.p.limits[0]: unknown limit \"nope\"");
        assertThat(error("  api: {limits: [per_minute], tiers: {p: {keys: [a, \"b\\\\c\"], blocked: true}}}\n"))
                .contains("rules.api.tiers.p.keys[1]: keys[1] of tier 'p'");
        assertThat(error("  api: {limits: [per_minute], tiers: {p: {keys: [a, a], blocked: true}}}\n"))
                .contains("rules.api.tiers.p.keys[1]: keys[1] of tier 'p' repeats 'a'");
        assertThat(error("  api: {limits: [per_minute], tiers: {p: {keys: [], blocked: true}}}\n"))
                .contains("rules.api.tiers.p.keys: keys of tier 'p' must hold at least one key");
    }

    @Test
    void tiersThatCanNeverApplyNameTheTierOrTheKey() {
        assertThat(error("  api:\n    limits: [per_minute]\n    tiers:\n"
                + "      all: {keys: [\"*\"], unlimited: true}\n"
                + "      late: {keys: [x], blocked: true}\n"))
                .contains("t.yaml:10:7:").contains("rules.api.tiers.late: tiers[1] ('late') of rule 'api' can never apply:"
                        + " tier 'all' before it matches every key");
        assertThat(error("  api:\n    limits: [per_minute]\n    tiers:\n"
                + "      t: {keys: [\"t-*\"], unlimited: true}\n"
                + "      u: {keys: [u, t-1], blocked: true}\n"))
                .contains("rules.api.tiers.u.keys[1]: tiers[1] ('u') of rule 'api': key 't-1' can never apply here:"
                        + " tier 't' (pattern 't-*') before it matches it first");
        assertThat(error("  api:\n    limits: [per_minute]\n    mode: leased\n    tiers:\n"
                + "      jobs: {keys: [\"job-*\"], limits: [jobs]}\n"))
                .contains("rules.api.tiers.jobs: tiers[0] ('jobs') of rule 'api': ");
    }
}
