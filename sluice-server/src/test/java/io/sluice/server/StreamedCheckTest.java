package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Rule;
import io.sluice.Store;
import io.sluice.TokenBucket;
import io.sluice.rules.EnvoyConfig;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/**
 * {@code POST /v1/check}'s body read from the token stream ({@link StreamedCheck}) answers exactly as the tree
 * path ({@link CheckRequest#single(com.fasterxml.jackson.databind.JsonNode, RuleSet)}): the same check, or the same
 * refusal naming the same field.
 */
class StreamedCheckTest {

    private static final CheckRequest PARSER = new CheckRequest(new Settings("127.0.0.1", 0, 0, List.of(), "memory",
            null, null, null, null, Duration.ZERO, Settings.DEFAULT_MAX_BODY_BYTES, Settings.DEFAULT_MAX_BATCH,
            8, Settings.DEFAULT_MAX_ENTRIES, true, Duration.ZERO, Duration.ZERO,
            StoreFactory.RedisTuning.SERVER_DEFAULT), null);
    private static final RuleSet RULES = rules();

    private static RuleSet rules() {
        Rule api = Rule.of("api", TokenBucket.of(10, 5, Duration.ofSeconds(1)).named("per_key"));
        try {
            return RuleSet.bind(new RuleSet.Sources(List.of("t"), Map.of(api.name(), api), Map.of(), Set.of(),
                    EnvoyConfig.merge(List.of())), Store.memory().build());
        } catch (io.sluice.rules.RuleFileException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The outcome of one path: the check, or the refusal's message. */
    private static Object viaStream(String body) {
        try {
            return PARSER.single(body.getBytes(StandardCharsets.UTF_8), RULES);
        } catch (InvalidRequestException e) {
            return "refused: " + e.getMessage();
        }
    }

    private static Object viaTree(String body) {
        try {
            return PARSER.single(CheckRequest.parse(body.getBytes(StandardCharsets.UTF_8)), RULES);
        } catch (InvalidRequestException e) {
            return "refused: " + e.getMessage();
        }
    }

    @Test
    void theCommonShapeIsReadFromTheStreamAsTheTreeReadsIt() throws Exception {
        for (String body : List.of(
                "{\"rule\":\"api\",\"key\":\"user:1\"}",
                "{\"key\":\"user:1\",\"rule\":\"api\",\"permits\":3,\"op\":\"peek\"}",
                "{\"rule\":\"api\",\"key\":\"k\",\"op\":\"acquire\",\"domain\":\"acme\"}",
                "{\"rule\":\"api\",\"key\":\"k\\u00e9\",\"op\":\"try_at_most\",\"permits\":50}",
                " {\"rule\" : \"api\", \"key\": \"k\"}\n")) {
            assertThat(StreamedCheck.read(PARSER, body.getBytes(StandardCharsets.UTF_8), RULES)).as(body).isNotNull();
            assertThat(viaStream(body)).as(body).isInstanceOf(CheckRequest.RuleCheck.class).isEqualTo(viaTree(body));
        }
    }

    @Test
    void otherShapesAreLeftToTheTree() throws Exception {
        for (String body : List.of(
                "{\"limit\":\"per_key\",\"key\":\"k\"}",
                "{\"rule\":\"api\",\"key\":\"k\",\"op\":\"release\",\"lease\":1}",
                "{\"rule\":\"api\",\"key\":\"k\",\"permits\":1.5}",
                "{\"rule\":\"api\",\"key\":\"k\",\"permits\":\"2\"}",
                "{\"rule\":\"api\",\"key\":\"k\",\"rule\":\"api\"}",
                "{\"rule\":\"api\",\"key\":\"k\"} {}",
                "{\"rule\":\"api\",\"key\":\"k\",\"max_wait_ms\":5}",
                "{\"rule\":\"api\",\"key\":null}",
                "{\"rule\":\"api\"}",
                "[1]",
                "{\"rule\":\"api\",\"key\":\"k\",\"permits\":99999999999999999999999}",
                "{\"rule\":\"api\",\"key\":\"k\"")) {
            assertThat(StreamedCheck.read(PARSER, body.getBytes(StandardCharsets.UTF_8), RULES)).as(body).isNull();
            assertThat(viaStream(body)).as(body).isEqualTo(viaTree(body));
        }
    }

    @Test
    void refusalsOfTheCommonShapeNameTheFieldAsTheTreeDoes() {
        for (String body : List.of(
                "{\"rule\":\"nope\",\"key\":\"k\"}",
                "{\"rule\":\"api\",\"key\":\"\"}",
                "{\"rule\":\"api\",\"key\":\"longer than eight\"}",
                "{\"rule\":\"api\",\"key\":\"a\\u0001b\"}",
                "{\"rule\":\"api\",\"key\":\"\\ud800\"}",
                "{\"rule\":\"api\",\"key\":\"k\",\"op\":\"take\"}",
                "{\"rule\":\"api\",\"key\":\"k\",\"domain\":\"\"}",
                "{\"rule\":\"api\",\"key\":\"k\",\"permits\":0}",
                "{\"rule\":\"api\",\"key\":\"k\",\"permits\":11}",
                "{\"rule\":\"api\",\"key\":\"k\",\"permits\":-1,\"op\":\"peek\"}",
                "{\"rule\":\"api\",\"key\":\"k\",\"permits\":9223372036854775807,\"op\":\"try_at_most\"}")) {
            Object stream = viaStream(body);
            assertThat(stream).as(body).asString().startsWith("refused: ");
            assertThat(stream).as(body).isEqualTo(viaTree(body));
        }
    }

    @Provide
    Arbitrary<String> bodies() {
        Arbitrary<String> value = Arbitraries.of("\"api\"", "\"k\"", "\"peek\"", "\"try\"", "\"acquire\"",
                "\"release\"", "\"\"", "\"\\u0000\"", "\"\\udc00\"", "\"nine chars\"", "1", "0", "-3", "10", "11",
                "2.0", "null", "true", "[]", "{}");
        Arbitrary<String> field = Arbitraries.of("rule", "key", "op", "domain", "permits", "limit", "lease", "x");
        Arbitrary<String> member = field.flatMap(f -> value.map(v -> "\"" + f + "\":" + v));
        return member.list().ofMaxSize(6).map(members -> "{" + String.join(",", members) + "}");
    }

    @Property(tries = 2000)
    void anyBodyIsAnsweredAlikeByBothPaths(@ForAll("bodies") String body) {
        assertThat(viaStream(body)).isEqualTo(viaTree(body));
    }
}
