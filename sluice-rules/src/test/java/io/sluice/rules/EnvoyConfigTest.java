package io.sluice.rules;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.rules.EnvoyConfig.Entry;
import io.sluice.rules.EnvoyConfig.RateLimit;
import io.sluice.rules.EnvoyConfig.Unit;
import java.util.List;
import org.junit.jupiter.api.Test;

/** envoyproxy/ratelimit's configuration format, on the examples of its README. */
class EnvoyConfigTest {

    private static List<Entry> entries(String... keyValues) {
        List<Entry> list = new java.util.ArrayList<>();
        for (int i = 0; i < keyValues.length; i += 2) {
            list.add(new Entry(keyValues[i], keyValues[i + 1]));
        }
        return list;
    }

    @Test
    void example1TopLevelKeyValues() throws Exception {
        EnvoyConfig c = EnvoyConfig.parse("mongo.yaml", String.join("\n",
                "domain: mongo_cps",
                "descriptors:",
                "  - key: database",
                "    value: users",
                "    rate_limit:",
                "      unit: second",
                "      requests_per_unit: 500",
                "",
                "  - key: database",
                "    value: default",
                "    rate_limit:",
                "      unit: second",
                "      requests_per_unit: 500"));
        RateLimit users = c.match("mongo_cps", entries("database", "users"));
        assertThat(users.requestsPerUnit()).isEqualTo(500);
        assertThat(users.unit()).isEqualTo(Unit.SECOND);
        assertThat(users.fullKey()).isEqualTo("mongo_cps.database_users");
        assertThat(c.match("mongo_cps", entries("database", "other"))).isNull();
        assertThat(c.match("elsewhere", entries("database", "users"))).isNull();
        assertThat(c.rateLimits("mongo_cps")).hasSize(2);
    }

    @Test
    void example2NestedDescriptorsAndDefaultValues() throws Exception {
        EnvoyConfig c = EnvoyConfig.parse("messaging.yaml", String.join("\n",
                "domain: messaging",
                "descriptors:",
                "  # Only allow 5 marketing messages a day",
                "  - key: message_type",
                "    value: marketing",
                "    descriptors:",
                "      - key: to_number",
                "        rate_limit:",
                "          unit: day",
                "          requests_per_unit: 5",
                "",
                "  # Only allow 100 messages a day to any unique phone number",
                "  - key: to_number",
                "    rate_limit:",
                "      unit: day",
                "      requests_per_unit: 100"));
        RateLimit marketing = c.match("messaging", entries("message_type", "marketing", "to_number", "2061111111"));
        assertThat(marketing.requestsPerUnit()).isEqualTo(5);
        assertThat(marketing.path()).isEqualTo("message_type_marketing.to_number");
        RateLimit any = c.match("messaging", entries("to_number", "2061111111"));
        assertThat(any.requestsPerUnit()).isEqualTo(100);
        assertThat(any.unit()).isEqualTo(Unit.DAY);
        // The placeholder level has no limit of its own.
        assertThat(c.match("messaging", entries("message_type", "marketing"))).isNull();
    }

    @Test
    void example3MostSpecificMatchWinsAndZeroBlocks() throws Exception {
        EnvoyConfig c = EnvoyConfig.parse("edge.yaml", String.join("\n",
                "domain: edge_proxy_per_ip",
                "descriptors:",
                "  - key: remote_address",
                "    rate_limit:",
                "      unit: second",
                "      requests_per_unit: 10",
                "",
                "  # Black list IP",
                "  - key: remote_address",
                "    value: 50.0.0.5",
                "    rate_limit:",
                "      unit: second",
                "      requests_per_unit: 0"));
        assertThat(c.match("edge_proxy_per_ip", entries("remote_address", "50.0.0.1")).requestsPerUnit()).isEqualTo(10);
        assertThat(c.match("edge_proxy_per_ip", entries("remote_address", "50.0.0.5")).requestsPerUnit()).isZero();
    }

    @Test
    void example4DepthMustMatch() throws Exception {
        EnvoyConfig shallow = EnvoyConfig.parse("a.yaml", String.join("\n",
                "domain: example4",
                "descriptors:",
                "  - key: key",
                "    value: value",
                "    rate_limit:",
                "      requests_per_unit: 300",
                "      unit: second"));
        assertThat(shallow.match("example4", entries("key", "value", "subkey", "subvalue"))).isNull();
        EnvoyConfig deep = EnvoyConfig.parse("b.yaml", String.join("\n",
                "domain: example4",
                "descriptors:",
                "  - key: key",
                "    value: value",
                "    descriptors:",
                "      - key: subkey",
                "        rate_limit:",
                "          requests_per_unit: 300",
                "          unit: second"));
        assertThat(deep.match("example4", entries("key", "value", "subkey", "subvalue")).requestsPerUnit())
                .isEqualTo(300);
    }

    @Test
    void example5Unlimited() throws Exception {
        EnvoyConfig c = EnvoyConfig.parse("internal.yaml", String.join("\n",
                "domain: internal",
                "descriptors:",
                "  - key: ldap",
                "    rate_limit:",
                "      unlimited: true",
                "",
                "  - key: azure",
                "    rate_limit:",
                "      unit: minute",
                "      requests_per_unit: 100"));
        RateLimit ldap = c.match("internal", entries("ldap", "x"));
        assertThat(ldap.unlimited()).isTrue();
        assertThat(ldap.unit()).isNull();
        assertThat(c.match("internal", entries("azure", "x")).unit()).isEqualTo(Unit.MINUTE);
    }

    @Test
    void example6ShadowMode() throws Exception {
        EnvoyConfig c = EnvoyConfig.parse("e6.yaml", String.join("\n",
                "domain: example6",
                "descriptors:",
                "  - key: service",
                "    descriptors:",
                "      - key: user",
                "        value: user-a",
                "        rate_limit:",
                "          requests_per_unit: 10",
                "          unit: second",
                "        shadow_mode: true",
                "      - key: user",
                "        value: user-b",
                "        rate_limit:",
                "          requests_per_unit: 20",
                "          unit: second"));
        assertThat(c.match("example6", entries("service", "auth-service", "user", "user-a")).shadowMode()).isTrue();
        assertThat(c.match("example6", entries("service", "auth-service", "user", "user-b")).shadowMode()).isFalse();
    }

    @Test
    void example7ReplacesByName() throws Exception {
        EnvoyConfig c = EnvoyConfig.parse("e7.yaml", String.join("\n",
                "domain: example7",
                "descriptors:",
                "  - key: key_1",
                "    value: value_1",
                "    descriptors:",
                "      - key: user",
                "        value: bkthomps",
                "        rate_limit:",
                "          name: specific_limit",
                "          requests_per_unit: 5",
                "          unit: second",
                "  - key: key_2",
                "    value: value_2",
                "    descriptors:",
                "      - key: user",
                "        value: bkthomps",
                "        rate_limit:",
                "          replaces:",
                "            - name: specific_limit",
                "          requests_per_unit: 10",
                "          unit: second"));
        assertThat(c.match("example7", entries("key_1", "value_1", "user", "bkthomps")).name())
                .isEqualTo("specific_limit");
        assertThat(c.match("example7", entries("key_2", "value_2", "user", "bkthomps")).replaces())
                .containsExactly("specific_limit");
    }

    @Test
    void example8And9DetailedMetricAndWildcards() throws Exception {
        EnvoyConfig c = EnvoyConfig.parse("e8.yaml", String.join("\n",
                "domain: example8",
                "descriptors:",
                "  - key: key1",
                "    detailed_metric: true",
                "    rate_limit:",
                "      unit: minute",
                "      requests_per_unit: 10",
                "  - key: key1",
                "    value: value1",
                "    rate_limit:",
                "      unit: minute",
                "      requests_per_unit: 20",
                "---",
                "domain: example9",
                "descriptors:",
                "  - key: key1",
                "    value: value*",
                "    rate_limit:",
                "      unit: minute",
                "      requests_per_unit: 20"));
        assertThat(c.domains()).containsExactly("example8", "example9");
        assertThat(c.match("example8", entries("key1", "unspecified")).detailedMetric()).isTrue();
        assertThat(c.match("example8", entries("key1", "value1")).requestsPerUnit()).isEqualTo(20);
        assertThat(c.match("example9", entries("key1", "value_1")).requestsPerUnit()).isEqualTo(20);
        assertThat(c.match("example9", entries("key1", "valve"))).isNull();
    }

    @Test
    void numbersWrittenWithoutQuotesAreTheirText() throws Exception {
        EnvoyConfig c = EnvoyConfig.parse("n.yaml", "domain: d\ndescriptors:\n  - key: code\n    value: 404\n"
                + "    rate_limit: {unit: hour, requests_per_unit: 1}\n");
        assertThat(c.match("d", entries("code", "404"))).isNotNull();
    }

    @Test
    void errorsNameFileLineAndField() {
        assertThatThrownBy(() -> EnvoyConfig.parse("bad.yaml", String.join("\n",
                "domain: d",
                "descriptors:",
                "  - key: a",
                "    rate_limit:",
                "      unit: fortnight",
                "      requests_per_unit: 1")))
                .isInstanceOf(RuleFileException.class)
                .hasMessage("bad.yaml:5:7: descriptors[0].rate_limit.unit: invalid rate limit unit 'fortnight';"
                        + " expected second, minute, hour, day, week, month or year");
        assertThatThrownBy(() -> EnvoyConfig.parse("bad.yaml", "domain: d\ndescriptors:\n  - key: a\n"
                + "    rate_limit: {unit: second, requests_per_unit: -1}\n"))
                .hasMessageContaining("bad.yaml:4:")
                .hasMessageContaining("descriptors[0].rate_limit.requests_per_unit: requests_per_unit must be in");
        assertThatThrownBy(() -> EnvoyConfig.parse("bad.yaml", "domain: d\ndescriptors:\n  - key: a\n"
                + "    rate_limits: {unit: second, requests_per_unit: 1}\n"))
                .hasMessageContaining("descriptors[0].rate_limits: unknown key 'rate_limits'");
        assertThatThrownBy(() -> EnvoyConfig.parse("bad.yaml", "domain: d\ndescriptors:\n  - key: a\n"
                + "    rate_limit: {unlimited: true, unit: second}\n"))
                .hasMessageContaining("should not specify rate limit unit when unlimited");
        assertThatThrownBy(() -> EnvoyConfig.parse("bad.yaml", "domain: d\ndescriptors:\n  - key: a\n"
                + "    rate_limit: {unit: second, requests_per_unit: 1}\n  - key: a\n"
                + "    rate_limit: {unit: second, requests_per_unit: 2}\n"))
                .hasMessageContaining("bad.yaml:5:")
                .hasMessageContaining("duplicate descriptor composite key 'd.a'");
        assertThatThrownBy(() -> EnvoyConfig.parse("bad.yaml", "domain: d\ndescriptors:\n  - key: a\n"
                + "    rate_limit: {unit: second}\n"))
                .hasMessageContaining("missing 'requests_per_unit'");
        assertThatThrownBy(() -> EnvoyConfig.parse("bad.yaml", "domain: ''\n"))
                .hasMessageContaining("config file cannot have empty domain");
        assertThatThrownBy(() -> EnvoyConfig.parse("bad.yaml", "domain: d\n---\ndomain: d\n"))
                .hasMessageContaining("duplicate domain 'd'");
    }

    @Test
    void detectsTheFormat() {
        assertThat(EnvoyConfig.looksLikeEnvoyConfig("# x\ndomain: a\n")).isTrue();
        assertThat(EnvoyConfig.looksLikeEnvoyConfig("limits:\n  a: {algorithm: gcra}\n")).isFalse();
    }

    @Test
    void mergeRefusesADomainTwice() throws Exception {
        EnvoyConfig a = EnvoyConfig.parse("a.yaml", "domain: x\n");
        EnvoyConfig b = EnvoyConfig.parse("b.yaml", "domain: x\n");
        assertThatThrownBy(() -> EnvoyConfig.merge(List.of(a, b)))
                .hasMessage("b.yaml: domain: duplicate domain 'x', already configured in a.yaml");
    }
}
