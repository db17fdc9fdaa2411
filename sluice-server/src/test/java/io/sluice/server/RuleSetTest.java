package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.Store;
import io.sluice.rules.RuleFileException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class RuleSetTest {

    @Test
    void theBundledRulesAreTheExampleFile() throws Exception {
        String bundled;
        try (InputStream in = RuleSet.class.getResourceAsStream(RuleSet.BUNDLED_RESOURCE)) {
            bundled = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        assertThat(bundled).isEqualTo(Files.readString(Path.of("..", "examples", "server-rules.yaml")));
        RuleSet rules = RuleSet.bind(RuleSet.read(List.of()), Store.memory().build());
        assertThat(rules.sourceNames()).containsExactly(RuleSet.BUNDLED_NAME, RuleSet.BUNDLED_ENVOY_NAME);
        assertThat(rules.rules()).containsOnlyKeys("api", "login", "uploads");
        try (InputStream in = RuleSet.class.getResourceAsStream(RuleSet.BUNDLED_ENVOY_RESOURCE)) {
            assertThat(new String(in.readAllBytes(), StandardCharsets.UTF_8))
                    .isEqualTo(Files.readString(Path.of("..", "examples", "envoy-rules.yaml")));
        }
        // The README's envoy examples answer with real limits: the bundled domain limits them.
        assertThat(rules.envoy().domains()).containsExactly("messaging");
        assertThat(rules.envoy().match("messaging", List.of(new io.sluice.rules.EnvoyConfig.Entry("to_number",
                "2061111111"))).requestsPerUnit()).isEqualTo(100);
    }

    @Test
    void sluiceRuleFilesAndEnvoyConfigurationsAreToldApartAndCombined() throws Exception {
        RuleSet.Sources s = RuleSet.combine(List.of("a.yaml", "b.yaml", "c.yaml"), List.of(
                "limits:\n  l: {algorithm: gcra, limit: 1, period: 1s}\nrules:\n  r1: {limits: [l]}\n",
                "domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: second, requests_per_unit: 1}\n",
                "limits:\n  l: {algorithm: gcra, limit: 2, period: 1s}\n  m: {algorithm: gcra, limit: 2, period: 1s}\n"
                        + "rules:\n  r2: {limits: [l, m]}\n"));
        assertThat(s.rules()).containsOnlyKeys("r1", "r2");
        assertThat(s.envoy().domains()).containsExactly("d");
        // A limit of the same name in two files cannot be addressed alone.
        assertThat(s.limits()).containsOnlyKeys("m");
        assertThat(s.ambiguousLimits()).containsExactly("l");
        RuleSet set = RuleSet.bind(s, Store.memory().build());
        assertThat(set.limit("l")).isNull();
        assertThat(set.ambiguousLimit("l")).isTrue();
        assertThat(set.summary()).isEqualTo("2 rules (r1: l, r2: l + m), 1 envoy domain (d)");
    }

    @Test
    void aRuleNameMayBeDefinedOnce() {
        String file = "limits:\n  l: {algorithm: gcra, limit: 1, period: 1s}\nrules:\n  r: {limits: [l]}\n";
        assertThatThrownBy(() -> RuleSet.combine(List.of("a.yaml", "b.yaml"), List.of(file, file)))
                .isInstanceOf(RuleFileException.class)
                .hasMessage("b.yaml: rules.r: rule \"r\" is already defined in a.yaml; rule names must be unique"
                        + " across files");
    }

    @Test
    void longNamesAreShortenedStablyAndDistinctly() {
        String a = "x".repeat(200) + "a";
        String b = "x".repeat(200) + "b";
        assertThat(RuleSet.fit(a)).hasSize(128).isEqualTo(RuleSet.fit(a)).isNotEqualTo(RuleSet.fit(b));
        assertThat(RuleSet.fit("short")).isEqualTo("short");
        assertThat(RuleSet.envoyRuleName("d.k_v")).isEqualTo("rls:d.k_v");
    }

    @Test
    void everyLimiterOfASetAndOfItsReloadsTellsTheListenerTheKey() throws Exception {
        String file = "limits:\n  l: {algorithm: fixed_window, limit: 1, window: 1h}\nrules:\n  r: {limits: [l]}\n";
        String envoy = "domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: hour, requests_per_unit: 1}\n";
        HotKeys hot = new HotKeys(new io.sluice.testkit.ManualClock(), 8);
        try (Store store = Store.memory().build()) {
            RuleSet set = RuleSet.bind(RuleSet.combine(List.of("a.yaml", "e.yaml"), List.of(file, envoy)), store, hot);
            set.rule("r").limiter().tryAcquire("user:1");
            set.limit("l").limiter().tryAcquire("user:2");
            RuleSet reloaded = set.rebind(RuleSet.combine(List.of("a.yaml"), List.of(file)), store);
            reloaded.rule("r").limiter().tryAcquire("user:1");
            io.sluice.rules.EnvoyConfig.RateLimit k = set.envoy().rateLimits("d").get(0);
            set.envoy(k).limiter().tryAcquire("k=v");
        }
        assertThat(hot.report(10).hottest()).containsExactly(new HotKeys.Entry("r", "user:1", 2, 0),
                new HotKeys.Entry("limit:l", "user:2", 1, 0), new HotKeys.Entry("rls:d.k", "k=v", 1, 0));
        assertThat(hot.report(10).mostRejected()).containsExactly(new HotKeys.Entry("r", "user:1", 1, 0));
    }
}
