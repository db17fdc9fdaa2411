package io.sluice.rules;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sluice.FixedWindow;
import io.sluice.Gcra;
import io.sluice.Limit;
import io.sluice.SlidingLog;
import io.sluice.TokenBucket;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** {@link RuleFile#changeLimit}: what a trace's set_limit (and later the server's admin API) applies. */
class LimitChangeTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static Limit change(Limit current, String json) throws Exception {
        return RuleFile.changeLimit(current, JSON.readTree(json), "trace.jsonl", 7, "params");
    }

    private static RuleFileException error(Limit current, String json) throws Exception {
        JsonNode node = JSON.readTree(json);
        return catchThrowableOfType(() -> RuleFile.changeLimit(current, node, "trace.jsonl", 7, "params"),
                RuleFileException.class);
    }

    @Test
    void aSubsetOfParametersKeepsTheOthers() throws Exception {
        SlidingLog log = new SlidingLog("per_min", 30, Duration.ofMinutes(1), Duration.ofSeconds(1), true);

        assertThat(change(log, "{\"limit\": 10}")).isEqualTo(log.withLimit(10));
        assertThat(change(log, "{\"window\": \"30s\", \"count_rejected\": false}"))
                .isEqualTo(log.withWindow(Duration.ofSeconds(30)).withCountRejected(false));
        assertThat(change(log, "{\"algorithm\": \"sliding_log\", \"limit\": 10}")).isEqualTo(log.withLimit(10));
    }

    @Test
    void theFullSetOfParameters() throws Exception {
        FixedWindow fw = FixedWindow.of(5, Duration.ofSeconds(1)).named("fw");

        assertThat(change(fw, "{\"limit\": 7, \"window\": \"2s\", \"align\": \"first_request\","
                + " \"count_rejected\": true}"))
                .isEqualTo(new FixedWindow("fw", 7, Duration.ofSeconds(2), FixedWindow.Align.FIRST_REQUEST, true));
    }

    @Test
    void tokenBucketInitialTokensFollowAFullBucketAsWithCapacityDoes() throws Exception {
        TokenBucket full = TokenBucket.of(10, 1, Duration.ofSeconds(1)).named("tb");
        TokenBucket partly = full.withInitialTokens(4);

        assertThat(change(full, "{\"capacity\": 20}")).isEqualTo(full.withCapacity(20));
        assertThat(((TokenBucket) change(full, "{\"capacity\": 20}")).initialTokens()).isEqualTo(20);
        assertThat(change(partly, "{\"capacity\": 20}")).isEqualTo(partly.withCapacity(20));
        assertThat(((TokenBucket) change(partly, "{\"capacity\": 20}")).initialTokens()).isEqualTo(4);
    }

    @Test
    void gcraBurstIsKeptAsWithLimitKeepsIt() throws Exception {
        Gcra gcra = Gcra.of(10, Duration.ofSeconds(1)).named("g");

        assertThat(change(gcra, "{\"limit\": 20}")).isEqualTo(gcra.withLimit(20, Duration.ofSeconds(1)));
    }

    @Test
    void anotherAlgorithmIsAFullDefinitionUnderTheSameName() throws Exception {
        Gcra gcra = Gcra.of(10, Duration.ofSeconds(1)).named("g");

        assertThat(change(gcra, "{\"algorithm\": \"sliding_log\", \"limit\": 3, \"window\": \"1s\"}"))
                .isEqualTo(SlidingLog.of(3, Duration.ofSeconds(1)).named("g"));
        RuleFileException missing = error(gcra, "{\"algorithm\": \"sliding_log\", \"limit\": 3}");
        assertThat(missing.getMessage()).isEqualTo("trace.jsonl:7: params: missing parameter window ("
                + Durations.EXPECTED + "), required by sliding_log");
    }

    @Test
    void errorsNameTheParameterUnderParams() throws Exception {
        SlidingLog log = SlidingLog.of(30, Duration.ofMinutes(1)).named("per_min");

        assertThat(error(log, "{\"limit\": 0}").getMessage())
                .isEqualTo("trace.jsonl:7: params.limit: limit must be in [1, 1000000], was 0");
        assertThat(error(log, "{\"limit\": \"ten\"}").getMessage())
                .isEqualTo("trace.jsonl:7: params.limit: expected an integer; was the string \"ten\"");
        assertThat(error(log, "{\"burst\": 3}").getMessage())
                .isEqualTo("trace.jsonl:7: params.burst: unknown parameter for sliding_log; expected one of limit,"
                        + " window, min_gap, count_rejected");
        assertThat(error(log, "{}").getMessage())
                .isEqualTo("trace.jsonl:7: params: expected at least one parameter to change");
        assertThat(error(log, "{\"algorithm\": \"nope\"}").getMessage())
                .startsWith("trace.jsonl:7: params.algorithm: unknown algorithm \"nope\"");
        assertThat(error(log, "{\"min_gap\": \"2m\"}").getMessage())
                .isEqualTo("trace.jsonl:7: params.min_gap: min_gap must be in [0, window=PT1M], was PT2M");
    }
}
