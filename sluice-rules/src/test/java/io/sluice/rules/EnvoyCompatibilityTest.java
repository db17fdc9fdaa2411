package io.sluice.rules;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.FailurePolicy;
import io.sluice.rules.EnvoyConfig.Entry;
import io.sluice.rules.EnvoyConfig.Match;
import io.sluice.rules.EnvoyConfig.Unit;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * envoyproxy/ratelimit's own configurations (its {@code test/config/*.yaml}, its integration runtime
 * configurations and its example), kept unchanged under {@code src/test/resources/envoyproxy-ratelimit/}: each
 * loads or is refused as that service does, and requests get the limit and statistics key its
 * {@code test/config/config_test.go} expects.
 */
class EnvoyCompatibilityTest {

    private static final String DIR = "/envoyproxy-ratelimit/";

    private static String fixture(String name) throws IOException {
        try (InputStream in = EnvoyCompatibilityTest.class.getResourceAsStream(DIR + name)) {
            assertThat(in).as(name).isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private static EnvoyConfig load(String... names) throws Exception {
        List<EnvoyConfig> configs = new ArrayList<>();
        for (String name : names) {
            String text = fixture(name);
            if (!name.equals("bad_yaml.yaml")) { // not YAML at all: refused whichever format it is taken for
                assertThat(EnvoyConfig.looksLikeEnvoyConfig(text)).as(name + " is told from a rule file").isTrue();
            }
            configs.add(EnvoyConfig.parse(name, text));
        }
        return EnvoyConfig.merge(configs);
    }

    static Stream<Arguments> refused() {
        return Stream.of(
                Arguments.of(List.of("empty_domain.yaml"), "config file cannot have empty domain"),
                Arguments.of(List.of("basic_config.yaml", "duplicate_domain.yaml"), "duplicate domain 'test-domain'"),
                Arguments.of(List.of("merge_domain_key1.yaml", "merge_domain_key2.yaml"),
                        "duplicate domain 'test-domain'"),
                Arguments.of(List.of("empty_key.yaml"), "descriptor has empty key"),
                Arguments.of(List.of("duplicate_key.yaml"),
                        "duplicate descriptor composite key 'test-domain.key1_value1'"),
                Arguments.of(List.of("bad_limit_unit.yaml"), "invalid rate limit unit 'foo'"),
                Arguments.of(List.of("replaces_self.yaml"), "replaces should not contain name of same descriptor"),
                Arguments.of(List.of("replaces_empty.yaml"), "should not have an empty replaces entry"),
                Arguments.of(List.of("bad_yaml.yaml"), "not valid YAML"),
                Arguments.of(List.of("misspelled_key.yaml"), "unknown key 'ratelimit'"),
                Arguments.of(List.of("misspelled_key2.yaml"), "unknown key 'requestsperunit'"),
                Arguments.of(List.of("non_string_key.yaml"), "unknown key '0.25'"),
                Arguments.of(List.of("non_map_list.yaml"), "expected a descriptor"),
                Arguments.of(List.of("unlimited_with_unit.yaml"), "should not specify rate limit unit when unlimited"));
    }

    @ParameterizedTest(name = "{0} is refused: {1}")
    @MethodSource("refused")
    void refusedAsEnvoyRefusesIt(List<String> files, String message) {
        assertThatThrownBy(() -> load(files.toArray(String[]::new)))
                .isInstanceOf(RuleFileException.class)
                .hasMessageContaining(message)
                .hasMessageContaining(files.get(files.size() - 1));
    }

    /**
     * One request and what it gets: the file(s), the domain and entries (key, value, key, value…), and the
     * expected requests per unit, unit and statistics key, or no limit when {@code rpu} is negative.
     */
    record Expect(String file, String domain, List<String> entries, long rpu, Unit unit, String statsKey) {

        @Override
        public String toString() {
            return file + " " + entries + " -> " + (rpu < 0 ? "no limit" : rpu + "/" + unit + " " + statsKey);
        }
    }

    private static Arguments x(String file, String domain, String entries, long rpu, Unit unit, String statsKey) {
        return Arguments.of(new Expect(file, domain, entries.isEmpty() ? List.of()
                : Arrays.asList(entries.split(",", -1)), rpu, unit, statsKey));
    }

    private static Arguments none(String file, String domain, String entries) {
        return x(file, domain, entries, -1, null, null);
    }

    static Stream<Arguments> answers() {
        String b = "basic_config.yaml";
        String t = "test-domain";
        String w = "wildcard.yaml";
        String s = "share_threshold.yaml";
        return Stream.of(
                // TestBasicConfig
                none(b, "foo_domain", ""),
                none(b, t, ""),
                none(b, t, "key1,something"),
                none(b, t, "key1,value1"),
                none(b, t, "key2,value2,subkey,subvalue"),
                none(b, t, "key5,value5,subkey5,subvalue"),
                x(b, t, "key1,value1,subkey1,something", 5, Unit.SECOND, "test-domain.key1_value1.subkey1"),
                x(b, t, "key1,value1,subkey1,subvalue1", 10, Unit.SECOND, "test-domain.key1_value1.subkey1_subvalue1"),
                x(b, t, "key2,something", 20, Unit.MINUTE, "test-domain.key2"),
                x(b, t, "key2,value2", 30, Unit.MINUTE, "test-domain.key2_value2"),
                none(b, t, "key2,value3"),
                x(b, t, "key3,foo", 1, Unit.HOUR, "test-domain.key3"),
                x(b, t, "key4,foo", 1, Unit.DAY, "test-domain.key4"),
                x(b, t, "key7,unspecified_value", 70, Unit.MINUTE, "test-domain.key7_unspecified_value"),
                x(b, t, "key7,another_value", 70, Unit.MINUTE, "test-domain.key7_another_value"),
                // TestShadowModeConfig
                x("shadowmode_config.yaml", t, "key1,value1,subkey1,subvalue1", 10, Unit.SECOND,
                        "test-domain.key1_value1.subkey1_subvalue1"),
                // TestWildcardConfig
                x(w, t, "noVal,foo1", 20, Unit.MINUTE, "test-domain.noVal"),
                x(w, t, "wild,foo1", 20, Unit.MINUTE, "test-domain.wild_foo*"),
                x(w, t, "wild,foo2", 20, Unit.MINUTE, "test-domain.wild_foo*"),
                x(w, t, "nestedWild,val1,wild,goo2", 20, Unit.MINUTE, "test-domain.nestedWild_val1.wild_goo*"),
                none(w, t, "wild,bar"),
                none(w, t, "noWild,foo1"),
                x(w, t, "midWild,barab", 20, Unit.MINUTE, "test-domain.midWild_bar*b"),
                x(w, t, "midWild,bar123b", 20, Unit.MINUTE, "test-domain.midWild_bar*b"),
                x(w, t, "midWild,barb", 20, Unit.MINUTE, "test-domain.midWild_bar*b"),
                none(w, t, "midWild,bara"),
                none(w, t, "midWild,xbarb"),
                x(w, t, "multiWild,foo123bar456baz", 10, Unit.MINUTE, "test-domain.multiWild_foo*bar*baz"),
                x(w, t, "multiWild,foobarbaz", 10, Unit.MINUTE, "test-domain.multiWild_foo*bar*baz"),
                none(w, t, "multiWild,foo123baz"),
                none(w, t, "multiWild,bar456baz"),
                // TestShareThreshold
                x(s, t, "files,files/a.txt", 100, Unit.MINUTE, "test-domain.files_files/*"),
                x(s, t, "route,api/v1,method,GET", 60, Unit.MINUTE, "test-domain.route_api/*.method"),
                x(s, t, "service,svc/user,endpoint,get", 80, Unit.MINUTE, "test-domain.service_svc/*.endpoint_get"),
                x(s, t, "nested,parent,files,nested/file1.txt", 200, Unit.MINUTE,
                        "test-domain.nested_parent.files_nested/*"),
                x(s, t, "files,top/file1.txt,files,nested/file1.txt", 300, Unit.MINUTE,
                        "test-domain.files_top/*.files_nested/*"),
                x(s, t, "path,path/foo,file,file/doc1,type,pdf", 120, Unit.MINUTE,
                        "test-domain.path_path/*.file_file/*.type"),
                x(s, t, "user,user/alice,resource,res/file1,action,read", 150, Unit.MINUTE,
                        "test-domain.user_user/*.resource_res/*.action"),
                x(s, t, "file,test1", 50, Unit.MINUTE, "test-domain.file_test1"),
                x(s, t, "file,test2", 100, Unit.MINUTE, "test-domain.file_test*"),
                x(s, t, "midpath,/api/v1", 100, Unit.MINUTE, "test-domain.midpath_/api*v1"),
                none(s, t, "midpath,/api/v2"),
                x(s, t, "multiroute,svcXepYrpc", 50, Unit.MINUTE, "test-domain.multiroute_svc*ep*rpc"),
                none(s, t, "multiroute,svcABCrpc"),
                x(s, t, "midroute,/api-beta-v2", 80, Unit.MINUTE, "test-domain.midroute_/api*v2"),
                x(s, t, "tenant,t1prod,resource,resAv2", 60, Unit.MINUTE, "test-domain.tenant_t*prod.resource_res*v2"),
                // TestMetadata
                x("metadata.yaml", t, "key2,x", 20, Unit.MINUTE, "test-domain.key2"),
                // The integration runtime configurations and the example
                x("integration_basic.yaml", "basic", "one_per_minute,x", 1, Unit.MINUTE, "basic.one_per_minute"),
                x("integration_another.yaml", "another", "key4_local,x", 20, Unit.DAY, "another.key4_local"),
                x("integration_reload.yaml", "reload", "block,x", 0, Unit.SECOND, "reload.block"),
                x("integration_share_threshold.yaml", "share-threshold-test", "files,files/b", 10, Unit.HOUR,
                        "share-threshold-test.files_files/*"),
                x("integration_share_threshold.yaml", "share-threshold-test", "files_no_share,files_no_share/b", 10,
                        Unit.HOUR, "share-threshold-test.files_no_share_files_no_share/*"),
                x("example_config.yaml", "mongo_cps", "database,users", 500, Unit.SECOND, "mongo_cps.database_users"),
                x("example_example.yaml", "rl", "foo,x,bar,banned", 0, Unit.MINUTE, "rl.foo.bar_banned"),
                x("example_example.yaml", "rl", "unspec,abc", 2, Unit.MINUTE, "rl.unspec_abc"),
                x("example_example.yaml", "rl", "service,service_2", 2, Unit.MINUTE, "rl.service_service_2"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("answers")
    void answersAsEnvoysTestsExpect(Expect e) throws Exception {
        EnvoyConfig config = load(e.file());
        List<Entry> entries = new ArrayList<>();
        for (int i = 0; i < e.entries().size(); i += 2) {
            entries.add(new Entry(e.entries().get(i), e.entries().get(i + 1)));
        }
        Match m = config.lookup(e.domain(), entries);
        if (e.rpu() < 0) {
            assertThat(m).isNull();
            return;
        }
        assertThat(m).isNotNull();
        assertThat(m.rateLimit().requestsPerUnit()).isEqualTo(e.rpu());
        assertThat(m.rateLimit().unit()).isEqualTo(e.unit());
        assertThat(m.statsKey()).isEqualTo(e.statsKey());
    }

    @Test
    void everyFixtureThatEnvoyLoadsLoads() throws Exception {
        for (String f : List.of("basic_config.yaml", "metadata.yaml", "shadowmode_config.yaml", "share_threshold.yaml",
                "wildcard.yaml", "merge_domain_key1.yaml", "merge_domain_key2.yaml", "integration_another.yaml",
                "integration_basic.yaml", "integration_reload.yaml", "integration_share_threshold.yaml",
                "example_config.yaml", "example_example.yaml")) {
            assertThat(load(f).domains()).as(f).isNotEmpty();
        }
    }

    @Test
    void flagsAndMetadataAreKept() throws Exception {
        EnvoyConfig basic = load("basic_config.yaml");
        assertThat(basic.match("test-domain", List.of(new Entry("key4", "foo"))).name()).isEqualTo("key4_rate_limit");
        assertThat(basic.match("test-domain", List.of(new Entry("key6", "foo"))).unlimited()).isTrue();
        EnvoyConfig shadow = load("shadowmode_config.yaml");
        assertThat(shadow.match("test-domain", List.of(new Entry("key2", "x"))).shadowMode()).isTrue();
        assertThat(shadow.match("test-domain", List.of(new Entry("key2", "value2"))).shadowMode()).isFalse();
        EnvoyConfig metadata = load("metadata.yaml");
        assertThat(metadata.match("test-domain", List.of(new Entry("key2", "x"))).metadata())
                .isEqualTo(Map.of("service_with_quota", Map.of("name", "service_2")));
        assertThat(metadata.match("test-domain", List.of(new Entry("key1", "value1"), new Entry("subkey1", "s")))
                .metadata()).isEqualTo(Map.of("name", "service_1"));
        EnvoyConfig example = load("example_example.yaml");
        assertThat(example.match("rl", List.of(new Entry("service", "service_1"))).quotaMode()).isTrue();
        assertThat(example.match("rl", List.of(new Entry("foo", "x"))).quotaMode()).isFalse();
        assertThat(example.match("rl", List.of(new Entry("category", "account"))).replaces())
                .containsExactly("bkthomps", "fake_name");
    }

    @Test
    void shareThresholdSharesTheWildcardsCounterPerEntry() throws Exception {
        EnvoyConfig c = load("share_threshold.yaml");
        Match two = c.lookup("test-domain", List.of(new Entry("files", "top/a"), new Entry("files", "nested/b")));
        assertThat(two.sharedValue()).containsExactly("top/*", "nested/*");
        Match mixed = c.lookup("test-domain", List.of(new Entry("path", "path/foo"), new Entry("file", "file/doc1"),
                new Entry("type", "pdf")));
        assertThat(mixed.sharedValue()).containsExactly("path/*", null, null);
        assertThat(c.lookup("test-domain", List.of(new Entry("file", "test1"))).sharedValue()).isNull();
    }

    @Test
    void valueToMetricNamesRequestValuesInTheStatisticsKey() throws Exception {
        // The configurations of config_test.go's TestValueToMetric_* cases, written as YAML.
        EnvoyConfig c = EnvoyConfig.parse("inline.yaml", String.join("\n",
                "domain: domain",
                "descriptors:",
                "  - key: route",
                "    value_to_metric: true",
                "    descriptors:",
                "      - key: http_method",
                "        value_to_metric: true",
                "        descriptors:",
                "          - key: subject_id",
                "            rate_limit: {unit: minute, requests_per_unit: 60}",
                "  - key: k1",
                "    value_to_metric: true",
                "    descriptors:",
                "      - key: k2",
                "        rate_limit: {unit: second, requests_per_unit: 1}"));
        assertThat(c.lookup("domain", List.of(new Entry("route", "draw"), new Entry("http_method", "GET"),
                new Entry("subject_id", "123"))).statsKey()).isEqualTo("domain.route_draw.http_method_GET.subject_id");
        assertThat(c.lookup("domain", List.of(new Entry("k1", "A"), new Entry("k2", "foo"))).statsKey())
                .isEqualTo("domain.k1_A.k2");
    }

    @Test
    void detailedMetricNamesEveryLevelsValue() throws Exception {
        // config_test.go's TestDetailedMetric "realistic" configuration, written as YAML.
        EnvoyConfig c = EnvoyConfig.parse("nested.yaml", String.join("\n",
                "domain: nested",
                "descriptors:",
                "  - key: key_1",
                "    detailed_metric: true",
                "    rate_limit: {unit: minute, requests_per_unit: 500}",
                "  - key: key_1",
                "    value: some-value-for-key-1",
                "    rate_limit: {unit: minute, requests_per_unit: 500}",
                "  - key: key_2",
                "    detailed_metric: true",
                "    rate_limit: {unit: minute, requests_per_unit: 5000}",
                "    descriptors:",
                "      - key: key_3",
                "        detailed_metric: true",
                "      - key: key_3",
                "        value: requested-key3-value",
                "        detailed_metric: true",
                "        rate_limit: {unit: minute, requests_per_unit: 5}"));
        assertThat(c.lookup("nested", List.of(new Entry("key_1", "value-for-key-1"))).statsKey())
                .isEqualTo("nested.key_1_value-for-key-1");
        assertThat(c.lookup("nested", List.of(new Entry("key_2", "key-2-value"))).statsKey())
                .isEqualTo("nested.key_2_key-2-value");
        Match deep = c.lookup("nested", List.of(new Entry("key_2", "key-2-value"),
                new Entry("key_3", "requested-key3-value")));
        assertThat(deep.statsKey()).isEqualTo("nested.key_2_key-2-value.key_3_requested-key3-value");
        assertThat(deep.rateLimit().requestsPerUnit()).isEqualTo(5);
    }

    @Test
    void shareThresholdNeedsAWildcard() {
        assertThatThrownBy(() -> EnvoyConfig.parse("s.yaml", String.join("\n",
                "domain: d",
                "descriptors:",
                "  - key: files",
                "    value: exact",
                "    share_threshold: true",
                "    rate_limit: {unit: minute, requests_per_unit: 1}")))
                .hasMessageContaining("descriptors[0].share_threshold")
                .hasMessageContaining("share_threshold can only be used with wildcard values (containing '*'), but"
                        + " found key 'files_exact'");
    }

    @Test
    void onFailureIsInheritedDownTheTree() throws Exception {
        EnvoyConfig c = EnvoyConfig.parse("f.yaml", String.join("\n",
                "domain: d",
                "on_failure: fail_open",
                "descriptors:",
                "  - key: a",
                "    rate_limit: {unit: minute, requests_per_unit: 1}",
                "  - key: b",
                "    on_failure: fail_closed",
                "    descriptors:",
                "      - key: c",
                "        rate_limit: {unit: minute, requests_per_unit: 1}",
                "  - key: e",
                "    on_failure: local_fallback",
                "    fallback_share: 0.5",
                "    rate_limit: {unit: minute, requests_per_unit: 1}"));
        assertThat(c.match("d", List.of(new Entry("a", "1"))).onFailure()).isEqualTo(FailurePolicy.failOpen());
        assertThat(c.match("d", List.of(new Entry("b", "1"), new Entry("c", "2"))).onFailure())
                .isEqualTo(FailurePolicy.failClosed());
        assertThat(c.match("d", List.of(new Entry("e", "1"))).onFailure()).isEqualTo(FailurePolicy.localFallback(0.5));
        assertThatThrownBy(() -> EnvoyConfig.parse("f.yaml", "domain: d\non_failure: sometimes\ndescriptors: []\n"))
                .hasMessageContaining("on_failure").hasMessageContaining("unknown on_failure \"sometimes\"");
    }
}
