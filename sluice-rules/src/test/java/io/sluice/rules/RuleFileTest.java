package io.sluice.rules;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.AlgorithmName;
import io.sluice.Concurrency;
import io.sluice.FixedWindow;
import io.sluice.Gcra;
import io.sluice.LeakyBucket;
import io.sluice.Limit;
import io.sluice.RefreshPeriod;
import io.sluice.RollingWindow;
import io.sluice.Rule;
import io.sluice.SlidingLog;
import io.sluice.SlidingWindow;
import io.sluice.SmoothBursty;
import io.sluice.SmoothWarmingUp;
import io.sluice.TokenBucket;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class RuleFileTest {

    private static Path resource(String name) throws URISyntaxException {
        return Path.of(RuleFileTest.class.getResource("/rules/" + name).toURI());
    }

    @Test
    void readsEveryParameterOfEveryAlgorithm() throws Exception {
        RuleFile file = RuleFile.read(resource("every-parameter.yaml"));

        assertThat(file.limits()).containsExactly(
                entry(new FixedWindow("fw", 100, Duration.ofMinutes(1), FixedWindow.Align.FIRST_REQUEST, true)),
                entry(new SlidingLog("log", 30, Duration.ofMinutes(1), Duration.ofMillis(250), true)),
                entry(new SlidingWindow("sw", 50, Duration.ofSeconds(10))),
                entry(new RollingWindow("rw", 1000, Duration.ofHours(1), Duration.ofMinutes(1))),
                entry(new TokenBucket("tb", 20, 5, Duration.ofMillis(500), TokenBucket.Refill.INTERVAL_ALIGNED, 3)),
                entry(new Gcra("gcra", 10, Duration.ofSeconds(1), 4)),
                entry(new LeakyBucket("nginx", 10, Duration.ofSeconds(1), 20, false, 8)),
                entry(new LeakyBucket("nginx_nodelay", 10, Duration.ofSeconds(1), 20, true, 0)),
                entry(new SmoothBursty("guava", 2.5, 4.0)),
                entry(new SmoothWarmingUp("warm", 100.0, Duration.ofSeconds(3), 5.5)),
                entry(new RefreshPeriod("r4j", 50, Duration.ofMillis(500), Duration.ZERO)),
                entry(new Concurrency("inflight", 8, Duration.ofSeconds(30))));
        assertThat(file.rules()).containsOnlyKeys("api", "shaped");
        assertThat(file.rules().get("api")).isEqualTo(Rule.of("api", file.limits().get("fw"), file.limits().get("log")));
        assertThat(file.rules().get("shaped").limits()).extracting(Limit::name)
                .containsExactly("nginx", "nginx_nodelay", "inflight");
        assertThat(file.source()).endsWith("every-parameter.yaml");
    }

    @Test
    void omittedParametersTakeTheDefaultsOfTheRecordsFactories() throws Exception {
        RuleFile file = RuleFile.read(resource("defaults.json"));

        assertThat(file.limits()).containsExactly(
                entry(FixedWindow.of(100, Duration.ofMinutes(1)).named("fw")),
                entry(SlidingLog.of(30, Duration.ofMinutes(1)).named("log")),
                entry(TokenBucket.of(20, 5, Duration.ofSeconds(1)).named("tb")),
                entry(Gcra.of(10, Duration.ofSeconds(1)).named("gcra")),
                entry(LeakyBucket.of(10, Duration.ofSeconds(1)).named("nginx")),
                entry(SmoothBursty.of(5).named("guava")),
                entry(SmoothWarmingUp.of(100, Duration.ofSeconds(3)).named("warm")),
                entry(RefreshPeriod.of(50, Duration.ofMillis(500)).named("r4j")));
        assertThat(file.rules()).isEmpty();
    }

    @Test
    void jsonAndYamlOfTheSameRulesAreEqual() throws Exception {
        RuleFile yaml = RuleFile.parse("a.yaml", "limits:\n  per_min: {algorithm: sliding_log, limit: 30, window: 1m}\n"
                + "rules:\n  partner_api: {limits: [per_min]}\n");
        RuleFile json = RuleFile.parse("a.json", "{\"limits\": {\"per_min\": {\"algorithm\": \"sliding_log\", "
                + "\"limit\": 30, \"window\": \"1m\"}}, \"rules\": {\"partner_api\": {\"limits\": [\"per_min\"]}}}");
        RuleFile sniffed = RuleFile.parse("rules", " {\"limits\": {\"per_min\": {\"algorithm\": \"sliding_log\", "
                + "\"limit\": 30, \"window\": \"1m\"}}, \"rules\": {\"partner_api\": {\"limits\": [\"per_min\"]}}}");

        assertThat(json.limits()).isEqualTo(yaml.limits());
        assertThat(json.rules()).isEqualTo(yaml.rules());
        assertThat(sniffed.rules()).isEqualTo(yaml.rules());
        assertThat(yaml.rules().get("partner_api")).isEqualTo(
                Rule.of("partner_api", SlidingLog.of(30, Duration.ofMinutes(1)).named("per_min")));
    }

    @Test
    void listsTheAlgorithms() {
        assertThat(RuleFile.algorithms()).containsExactly("fixed_window", "sliding_log", "sliding_window",
                "rolling_window", "token_bucket", "gcra", "leaky_bucket", "smooth_bursty", "smooth_warming_up",
                "refresh_period", "concurrency", "calendar_window");
    }

    @Test
    void everyAlgorithmHasAParserEntry() {
        // AlgorithmName is the one list; an algorithm added there without a LimitSchema entry fails here.
        assertThat(RuleFile.algorithms()).containsExactlyElementsOf(AlgorithmName.names());
    }

    // --- bad input: file, line, column, field, what was expected ---

    @Test
    void unknownTopLevelField() {
        assertError("limits:\n  a: {algorithm: gcra, limit: 1, period: 1s}\nrulez: {}\n",
                3, 1, "rulez", "unknown field; a rule file has 'limits' and 'rules'");
    }

    @Test
    void unknownAlgorithm() {
        assertError("limits:\n  a:\n    algorithm: token_buckett\n    capacity: 1\n",
                3, 5, "limits.a.algorithm", "unknown algorithm \"token_buckett\"; expected one of fixed_window,"
                        + " sliding_log, sliding_window, rolling_window, token_bucket, gcra, leaky_bucket,"
                        + " smooth_bursty, smooth_warming_up, refresh_period, concurrency");
    }

    @Test
    void missingAlgorithm() {
        assertError("limits:\n  a:\n    limit: 1\n", 2, 3, "limits.a", "missing 'algorithm'");
    }

    @Test
    void unknownParameterNamesTheAlgorithmsParameters() {
        assertError("limits:\n  a:\n    algorithm: sliding_log\n    limit: 3\n    window: 1s\n    burst: 2\n",
                6, 5, "limits.a.burst", "unknown parameter for sliding_log; expected one of limit, window, min_gap,"
                        + " count_rejected");
    }

    @Test
    void missingRequiredParameter() {
        assertError("limits:\n  a:\n    algorithm: rolling_window\n    limit: 3\n    window: 1m\n",
                2, 3, "limits.a", "missing parameter bucket (" + Durations.EXPECTED + "), required by rolling_window");
    }

    @Test
    void countOfTheWrongType() {
        assertError("limits:\n  a: {algorithm: fixed_window, limit: \"10\", window: 1s}\n",
                2, 32, "limits.a.limit", "expected an integer; was the string \"10\"");
        assertError("limits:\n  a: {algorithm: fixed_window, limit: 2.5, window: 1s}\n",
                2, 32, "limits.a.limit", "expected an integer; was the number 2.5");
    }

    @Test
    void durationWithoutUnit() {
        assertError("{\"limits\": {\"a\": {\"algorithm\": \"gcra\", \"limit\": 5,\n  \"period\": 60}}}",
                2, 3, "limits.a.period", "expected " + Durations.EXPECTED + "; was the integer 60");
        assertError("limits:\n  a: {algorithm: gcra, limit: 5, period: 60}\n",
                2, 34, "limits.a.period", "was the integer 60");
        assertError("limits:\n  a: {algorithm: gcra, limit: 5, period: 1 min}\n",
                2, 34, "limits.a.period", "was \"1 min\"");
    }

    @Test
    void durationThatIsNotWholeMicroseconds() {
        assertError("limits:\n  a: {algorithm: gcra, limit: 5, period: 0.0005ms}\n",
                2, 34, "limits.a.period", "expected a whole number of microseconds; \"0.0005ms\" is 0.5us");
    }

    @Test
    void booleanAndChoiceOfTheWrongType() {
        assertError("limits:\n  a: {algorithm: leaky_bucket, limit: 5, period: 1s, nodelay: \"yes\"}\n",
                2, 54, "limits.a.nodelay", "expected true or false; was the string \"yes\"");
        assertError("limits:\n  a: {algorithm: fixed_window, limit: 5, window: 1s, align: calendar}\n",
                2, 54, "limits.a.align", "expected one of epoch, first_request; was \"calendar\"");
        assertError("limits:\n  a: {algorithm: token_bucket, capacity: 5, refill_tokens: 1, refill_period: 1s,"
                        + " refill: smooth}\n",
                2, 82, "limits.a.refill", "expected one of greedy, interval, interval_aligned; was \"smooth\"");
    }

    @Test
    void invalidValuesReportTheRecordsMessageAtTheParameter() {
        assertError("limits:\n  a:\n    algorithm: sliding_log\n    limit: 0\n    window: 1s\n",
                4, 5, "limits.a.limit", "limit must be in [1, 1000000], was 0");
        assertError("limits:\n  a:\n    algorithm: sliding_log\n    limit: 5\n    window: 1s\n    min_gap: 2s\n",
                6, 5, "limits.a.min_gap", "min_gap must be in [0, window=PT1S], was PT2S");
        assertError("limits:\n  a:\n    algorithm: smooth_bursty\n    permits_per_second: 0\n",
                4, 5, "limits.a.permits_per_second", "permits_per_second must be a finite number in [");
        assertError("limits:\n  a:\n    algorithm: token_bucket\n    capacity: 5\n    refill_tokens: 1\n"
                        + "    refill_period: 1s\n    initial_tokens: 6\n",
                7, 5, "limits.a.initial_tokens", "initial_tokens must be in [0, 5], was 6");
        assertError("limits:\n  a:\n    algorithm: leaky_bucket\n    limit: 5\n    period: 1s\n    delay: 1\n",
                6, 5, "limits.a.delay", "delay must be in [0, 0], was 1");
        assertError("limits:\n  a:\n    algorithm: concurrency\n    max_concurrent: 2\n    lease_ttl: 400d\n",
                5, 5, "limits.a.lease_ttl", "lease_ttl must be in [1us, PT8784H]");
    }

    @Test
    void tooLongALimitNameIsReportedAtTheLimit() {
        String name = "n".repeat(129);
        assertError("limits:\n  " + name + ": {algorithm: gcra, limit: 1, period: 1s}\n",
                2, 3, "limits." + name, "name must be at most 128 characters, was 129");
    }

    @Test
    void ruleNamingAnUnknownLimit() {
        assertError("limits:\n  per_min: {algorithm: gcra, limit: 1, period: 1m}\nrules:\n  api:\n"
                        + "    limits: [per_min, per_sec]\n",
                5, 23, "rules.api.limits[1]", "unknown limit \"per_sec\"; the file defines per_min");
    }

    @Test
    void ruleOfTwoConcurrencyLimits() {
        assertError("limits:\n  a: {algorithm: concurrency, max_concurrent: 1, lease_ttl: 1s}\n"
                        + "  b: {algorithm: concurrency, max_concurrent: 2, lease_ttl: 1s}\n"
                        + "rules:\n  api: {limits: [a, b]}\n",
                5, 9, "rules.api.limits", "rule 'api' must hold at most one concurrency limit, had 2");
    }

    @Test
    void ruleWithoutLimitsAndUnknownRuleField() {
        assertError("limits:\n  a: {algorithm: gcra, limit: 1, period: 1s}\nrules:\n  api: {limits: []}\n",
                4, 9, "rules.api.limits", "expected at least one limit name");
        assertError("limits:\n  a: {algorithm: gcra, limit: 1, period: 1s}\nrules:\n  api: {limit: [a]}\n",
                4, 9, "rules.api.limit", "unknown field; a rule has limits, mode, lease_ttl");
        assertError("limits:\n  a: {algorithm: gcra, limit: 1, period: 1s}\nrules:\n  api: [a]\n",
                4, 3, "rules.api", "expected a map with 'limits': a list of limit names; was a list");
    }

    @Test
    void rulesCarryTheirModeAndFailurePolicy() throws Exception {
        RuleFile file = RuleFile.parse("m.yaml", "limits:\n"
                + "  w: {algorithm: fixed_window, limit: 100, window: 1s}\n"
                + "  s: {algorithm: sliding_window, limit: 100, window: 1s}\n"
                + "rules:\n"
                + "  plain: {limits: [w]}\n"
                + "  hot: {limits: [w], mode: leased, lease_ttl: 200ms, max_batch: 10, on_failure: fail_open}\n"
                + "  busy: {limits: [w, s], mode: synced, sync_interval: 50ms, on_failure: local_fallback,"
                + " fallback_share: 0.25}\n"
                + "  queued: {limits: [w], mode: coalesced, on_failure: fail_closed}\n");
        assertThat(file.rules().get("plain").mode()).isEqualTo(io.sluice.Mode.exact());
        assertThat(file.rules().get("plain").failurePolicy()).isEqualTo(io.sluice.FailurePolicy.raise());
        assertThat(file.rules().get("hot").mode()).isEqualTo(io.sluice.Mode.leased()
                .withLeaseTtl(java.time.Duration.ofMillis(200)).withMaxBatch(10));
        assertThat(file.rules().get("hot").failurePolicy()).isEqualTo(io.sluice.FailurePolicy.failOpen());
        assertThat(file.rules().get("busy").mode()).isEqualTo(io.sluice.Mode.synced(java.time.Duration.ofMillis(50)));
        assertThat(file.rules().get("busy").failurePolicy()).isEqualTo(io.sluice.FailurePolicy.localFallback(0.25));
        assertThat(file.rules().get("queued").mode()).isEqualTo(io.sluice.Mode.coalesced());
        assertThat(file.rules().get("queued").failurePolicy()).isEqualTo(io.sluice.FailurePolicy.failClosed());
        // Only "plain" leaves its mode to a server's default.
        assertThat(file.rulesWithOwnMode()).containsExactlyInAnyOrder("hot", "busy", "queued");
        RuleFile explicit = RuleFile.parse("e.yaml", "limits:\n  w: {algorithm: fixed_window, limit: 1, window: 1s}\n"
                + "rules:\n  a: {limits: [w], mode: exact}\n  b: {limits: [w]}\n");
        assertThat(explicit.rulesWithOwnMode()).containsExactly("a");
    }

    @Test
    void modeAndPolicyErrorsNameTheField() {
        String limits = "limits:\n  g: {algorithm: gcra, limit: 10, period: 1s}\nrules:\n";
        assertError(limits + "  api: {limits: [g], mode: turbo}\n", 4, 22, "rules.api.mode",
                "unknown mode \"turbo\"; expected one of exact, coalesced, leased, synced");
        assertError(limits + "  api: {limits: [g], mode: synced}\n", 4, 22, "rules.api.mode",
                "mode synced of rule 'api' supports [fixed_window, sliding_window]; limit 'g' is gcra");
        assertError(limits + "  api: {limits: [g], mode: leased, sync_interval: 1s}\n", 4, 36,
                "rules.api.sync_interval", "applies to mode synced only; this rule's mode is leased");
        assertError(limits + "  api: {limits: [g], mode: leased, lease_ttl: 0ms}\n", 4, 36, "rules.api.lease_ttl",
                "lease_ttl must be between 1ms and 1h");
        assertError(limits + "  api: {limits: [g], mode: leased, max_batch: 0}\n", 4, 36, "rules.api.max_batch",
                "max_batch must be in [1, ");
        assertError(limits + "  api: {limits: [g], on_failure: local_fallback}\n", 4, 22, "rules.api.on_failure",
                "local_fallback needs fallback_share");
        assertError(limits + "  api: {limits: [g], on_failure: local_fallback, fallback_share: 0.01}\n", 4, 50,
                "rules.api.fallback_share", "fallback_share 0.01 leaves limit 'g' of rule 'api' with limit=0");
        assertError(limits + "  api: {limits: [g], on_failure: fail_open, fallback_share: 0.5}\n", 4, 45,
                "rules.api.fallback_share", "applies to on_failure: local_fallback only");
        assertError(limits + "  api: {limits: [g], on_failure: sometimes}\n", 4, 22, "rules.api.on_failure",
                "unknown on_failure \"sometimes\"");
    }

    @Test
    void duplicateKeys() {
        assertError("limits:\n  a: {algorithm: gcra, limit: 1, period: 1s}\n  a: {algorithm: gcra, limit: 2, period: 1s}\n",
                3, 3, "limits.a", "appears twice");
    }

    @Test
    void missingOrEmptyLimits() {
        assertError("rules: {}\n", 1, 1, "", "missing 'limits'");
        assertError("limits: {}\n", 1, 1, "limits", "expected at least one limit");
        assertError("", 1, 0, "", "empty file");
        assertError("- a\n- b\n", 1, 1, "", "expected a map with 'limits' (and optionally 'rules'); was a list");
    }

    @Test
    void malformedYamlAndJson() {
        RuleFileException yaml = parseError("bad.yaml", "limits:\n  a: {algorithm: gcra, limit: 1\n");
        assertThat(yaml.line()).isEqualTo(2);
        assertThat(yaml.getMessage()).startsWith("bad.yaml:2:").contains("not valid YAML");

        RuleFileException json = parseError("bad.json", "{\"limits\": {\n\"a\": {\"algorithm\": \"gcra\",, }}}");
        assertThat(json.line()).isEqualTo(2);
        assertThat(json.getMessage()).startsWith("bad.json:2:").contains("not valid JSON");
    }

    @Test
    void messageNamesFileLineColumnAndField() {
        RuleFileException e = parseError("conf/rules.yaml", "limits:\n  a: {algorithm: gcra, limit: 0, period: 1s}\n");
        assertThat(e.getMessage()).isEqualTo("conf/rules.yaml:2:24: limits.a.limit: limit must be in [1, 1000000000000],"
                + " was 0");
        assertThat(e.source()).isEqualTo("conf/rules.yaml");
    }

    @Test
    void shadowIsTrueFalseOrAListOfTheRulesLimits() throws Exception {
        RuleFile file = RuleFile.parse("s.yaml", "limits:\n"
                + "  per_min: {algorithm: fixed_window, limit: 30, window: 1m}\n"
                + "  per_sec: {algorithm: gcra, limit: 5, period: 1s}\n"
                + "rules:\n"
                + "  all: {limits: [per_min, per_sec], shadow: true}\n"
                + "  none: {limits: [per_min], shadow: false}\n"
                + "  some: {limits: [per_min, per_sec], shadow: [per_sec], mode: coalesced}\n");
        assertThat(file.rules().get("all").shadow()).containsExactlyInAnyOrder("per_min", "per_sec");
        assertThat(file.rules().get("none").shadow()).isEmpty();
        assertThat(file.rules().get("some").shadow()).containsExactly("per_sec");
        assertThat(file.rules().get("some").isShadow("per_min")).isFalse();
    }

    @Test
    void shadowErrorsNameTheField() {
        String limits = "limits:\n  a: {algorithm: gcra, limit: 5, period: 1s}\n"
                + "  c: {algorithm: concurrency, max_concurrent: 2, lease_ttl: 10s}\nrules:\n";
        assertError(limits + "  r: {limits: [a], shadow: [b]}\n", 5, 29, "rules.r.shadow[0]",
                "\"b\" is not a limit of this rule; its limits are a");
        assertError(limits + "  r: {limits: [a], shadow: [a, a]}\n", 5, 32, "rules.r.shadow[1]", "\"a\" appears twice");
        assertError(limits + "  r: {limits: [a], shadow: yes please}\n", 5, 20, "rules.r.shadow",
                "expected true, false or a list of the rule's limit names; was the string \"yes please\"");
        assertError(limits + "  r: {limits: [a, c], shadow: [c]}\n", 5, 23, "rules.r.shadow",
                "a concurrency limit cannot be a shadow limit");
        assertError(limits + "  r: {limits: [a], mode: leased, shadow: true}\n", 5, 34, "rules.r.shadow",
                "shadow limits of rule 'r' run in the exact and coalesced modes only");
    }

    @Test
    void lockoutHasAfterWithinAndFor() throws Exception {
        RuleFile file = RuleFile.parse("l.yaml", "limits:\n"
                + "  attempts: {algorithm: fixed_window, limit: 5, window: 1m}\n"
                + "rules:\n"
                + "  login: {limits: [attempts], lockout: {after: 3, within: 15m, for: 1h}}\n");
        assertThat(file.rules().get("login").lockout())
                .isEqualTo(io.sluice.Lockout.of(3, Duration.ofMinutes(15), Duration.ofHours(1)));
    }

    @Test
    void lockoutErrorsNameTheField() {
        String limits = "limits:\n  a: {algorithm: gcra, limit: 5, period: 1s}\nrules:\n";
        assertError(limits + "  r: {limits: [a], lockout: {after: 0, within: 1m, for: 1h}}\n", 4, 30,
                "rules.r.lockout.after", "lockout.after must be in [1, 1000000000000], was 0");
        assertError(limits + "  r: {limits: [a], lockout: {after: 3, within: 0s, for: 1h}}\n", 4, 40,
                "rules.r.lockout.within", "lockout.within must be in [1us, PT8784H], was PT0S");
        assertError(limits + "  r: {limits: [a], lockout: {after: 3, within: 1m}}\n", 4, 20, "rules.r.lockout",
                "missing 'for'; expected a map {after: <rejections>, within: <duration>, for: <duration>}");
        assertError(limits + "  r: {limits: [a], lockout: {after: 3, within: 1m, for: 1h, extend: true}}\n", 4, 61,
                "rules.r.lockout.extend", "unknown field; a lockout has after, within, for");
        assertError(limits + "  r: {limits: [a], lockout: 5}\n", 4, 20, "rules.r.lockout",
                "expected a map {after: <rejections>, within: <duration>, for: <duration>}");
        assertError(limits + "  r: {limits: [a], mode: coalesced, lockout: {after: 3, within: 1m, for: 1h}}\n", 4, 37,
                "rules.r.lockout", "lockout of rule 'r' runs in the exact mode only; its mode is coalesced");
    }

    private static void assertError(String yaml, int line, int column, String field, String problem) {
        RuleFileException e = parseError(yaml.startsWith("{") ? "bad.json" : "bad.yaml", yaml);
        assertThat(e.field()).as(e.getMessage()).isEqualTo(field);
        assertThat(e.line()).as(e.getMessage()).isEqualTo(line);
        assertThat(e.column()).as(e.getMessage()).isEqualTo(column);
        assertThat(e.problem()).as(e.getMessage()).contains(problem);
        assertThat(e.getMessage()).startsWith(e.source() + ":" + line + ":");
    }

    private static RuleFileException parseError(String source, String text) {
        Throwable t = org.assertj.core.api.Assertions.catchThrowable(() -> RuleFile.parse(source, text));
        assertThat(t).isInstanceOf(RuleFileException.class);
        return (RuleFileException) t;
    }

    private static java.util.Map.Entry<String, Limit> entry(Limit limit) {
        return java.util.Map.entry(limit.name(), limit);
    }

    @Test
    void limitsOfTheWrongType() {
        assertThatThrownBy(() -> RuleFile.parse("x.yaml", "limits: 3\n")).isInstanceOf(RuleFileException.class)
                .hasMessage("x.yaml:1:1: limits: expected a map of limit names to their definitions; was the integer 3");
    }

    @Test
    void illFormedUnicodeInANameIsRefusedWithItsLine() {
        // YAML and JSON escapes can spell an unpaired surrogate; no store could keep it apart from "?".
        RuleFileException limit = parseError("bad.yaml",
                "limits:\n  \"per\\ud800\": {algorithm: gcra, limit: 1, period: 1s}\n");
        assertThat(limit.line()).isEqualTo(2);
        assertThat(limit.problem()).contains("well-formed Unicode").contains("U+D800");
        RuleFileException rule = parseError("bad.json", "{\"limits\": {\"a\": {\"algorithm\": \"gcra\","
                + " \"limit\": 1, \"period\": \"1s\"}}, \"rules\": {\"api\\udc00\": {\"limits\": [\"a\"]}}}");
        // Refused either by Sluice's check, naming the field, or (Jackson 2.23 and later, for an escape in a JSON
        // field name) by the JSON parser itself, naming the surrogate: never read as "api?".
        assertThat(rule).satisfiesAnyOf(
                e -> {
                    assertThat(e.problem()).contains("unpaired surrogate U+DC00");
                    assertThat(e.field()).startsWith("rules.api");
                },
                e -> assertThat(e.problem()).containsIgnoringCase("surrogate").containsIgnoringCase("dc00"));
    }

    @Test
    void illFormedUnicodeInAnEnvoyDomainOrValueIsRefused() {
        Throwable domain = org.assertj.core.api.Assertions.catchThrowable(() -> EnvoyConfig.parse("e.yaml",
                "domain: \"acme\\udbff\"\ndescriptors:\n  - key: k\n    rate_limit: {unit: second, requests_per_unit: 1}\n"));
        assertThat(domain).isInstanceOf(RuleFileException.class).hasMessageContaining("e.yaml:1:")
                .hasMessageContaining("unpaired surrogate U+DBFF");
        Throwable value = org.assertj.core.api.Assertions.catchThrowable(() -> EnvoyConfig.parse("e.yaml",
                "domain: acme\ndescriptors:\n  - key: k\n    value: \"v\\ud800\"\n"
                        + "    rate_limit: {unit: second, requests_per_unit: 1}\n"));
        assertThat(value).isInstanceOf(RuleFileException.class).hasMessageContaining("descriptors[0].value");
    }
}
