package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Decision;
import org.junit.jupiter.api.Test;

class JsonTest {

    private final Decision stored = new Decision(true, 1, 4, 0, 2_500, 0, "per_second", Decision.NO_LEASE);

    @Test
    void aDecisionOfTheStoreCarriesNoSource() {
        assertThat(Json.decision(new StringBuilder(), stored).toString()).isEqualTo("{\"allowed\":true,\"granted\":1,"
                + "\"remaining\":4,\"retry_after_ms\":0,\"reset_after_ms\":2.5,\"wait_ms\":0,\"limit\":\"per_second\"}");
    }

    @Test
    void aDecisionMadeUnderAPolicyOrLocallySaysSo() {
        assertThat(Json.decision(new StringBuilder(), stored.withSource(Decision.Source.FAIL_OPEN)).toString())
                .endsWith(",\"limit\":\"per_second\",\"source\":\"fail_open\"}");
        assertThat(Json.decision(new StringBuilder(), stored.withSource(Decision.Source.LOCAL_FALLBACK)).toString())
                .endsWith(",\"source\":\"local_fallback\"}");
        assertThat(Json.decision(new StringBuilder(), stored.withSource(Decision.Source.LEASE)).toString())
                .endsWith(",\"source\":\"lease\"}");
    }

    @Test
    void aDecisionAShadowLimitWouldHaveRejectedNamesItAndItsRetryAfter() {
        Decision shadowed = new Decision(true, 1, 2, 0, 59_800_000, 0, "per_minute", Decision.NO_LEASE,
                Decision.Source.STORE, "strict", 59_800_000);
        assertThat(Json.decision(new StringBuilder(), shadowed).toString())
                .endsWith(",\"limit\":\"per_minute\",\"shadow_limit\":\"strict\",\"shadow_retry_after_ms\":59800}");
        assertThat(StoreAnswer.decision(shadowed)).endsWith(",\"source\":\"store\",\"shadow_limit\":\"strict\","
                + "\"shadow_retry_after_us\":59800000}");
        assertThat(StoreAnswer.decision(stored)).endsWith(",\"source\":\"store\"}");
    }

    @Test
    void unpairedSurrogatesAreEscapedSoTheOutputIsAlwaysUtf8() {
        assertThat(Json.string(new StringBuilder(), "a\ud800b\udc00\ud83d\ude00\ud83d").toString())
                .isEqualTo("\"a\\ud800b\\udc00\ud83d\ude00\\ud83d\"");
    }
}
