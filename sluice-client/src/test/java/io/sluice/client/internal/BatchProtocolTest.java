package io.sluice.client.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.client.RemoteStoreException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The batch envelope: calls spliced in as they are, and each result's body cut out byte for byte. */
class BatchProtocolTest {

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void callsAreSplicedInOrder() {
        assertThat(BatchProtocol.calls(List.of("{\"op\":\"try\"}", "{\"op\":\"peek\"}")))
                .isEqualTo("{\"calls\":[{\"op\":\"try\"},{\"op\":\"peek\"}]}");
    }

    @Test
    void eachResultsBodyIsCutOutExactlyWhateverItHolds() {
        // Braces and quotes inside strings, multi-byte characters before and inside, fields in any order.
        String first = "{\"allowed\":true,\"limit\":\"a}{\\\"b\",\"remaining\":3}";
        String second = "{\"error\":\"key: \u00e9t\u00e9 \u2603 is not {valid}\",\"code\":\"invalid\"}";
        String third = "{\"released\":false}";
        String answer = "{\"results\":[{\"status\":200,\"body\":" + first + "},{\"body\":" + second
                + ",\"status\":400},{\"status\":200,\"extra\":[1,{\"x\":2}],\"body\":" + third + "}]}";
        Reply[] r = BatchProtocol.replies(utf8(answer), 3);
        assertThat(r[0].status()).isEqualTo(200);
        assertThat(new String(r[0].body(), StandardCharsets.UTF_8)).isEqualTo(first);
        assertThat(r[1].status()).isEqualTo(400);
        assertThat(new String(r[1].body(), StandardCharsets.UTF_8)).isEqualTo(second);
        assertThat(new String(r[2].body(), StandardCharsets.UTF_8)).isEqualTo(third);
    }

    @Test
    void anAnswerThatDoesNotMatchTheCallsIsUnreadableNotGuessed() {
        String one = "{\"results\":[{\"status\":200,\"body\":{\"reset\":true}}]}";
        assertThatThrownBy(() -> BatchProtocol.replies(utf8(one), 2)).isInstanceOf(RemoteStoreException.class)
                .hasMessageContaining("1 results for 2 calls");
        assertThatThrownBy(() -> BatchProtocol.replies(utf8(one), 0)).isInstanceOf(RemoteStoreException.class)
                .hasMessageContaining("more results than the 0 calls sent");
        assertThatThrownBy(() -> BatchProtocol.replies(utf8("{\"results\":[{\"status\":200}]}"), 1))
                .isInstanceOf(RemoteStoreException.class).hasMessageContaining("without a status and a body");
        assertThatThrownBy(() -> BatchProtocol.replies(utf8("{\"results\":[{\"status\":200,\"body\":{"), 1))
                .isInstanceOf(RemoteStoreException.class).hasMessageContaining("unreadable batch answer");
        assertThatThrownBy(() -> BatchProtocol.replies(utf8("[]"), 1))
                .isInstanceOf(RemoteStoreException.class).hasMessageContaining("not an object");
    }
}
