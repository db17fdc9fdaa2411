package io.sluice.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.AlgorithmName;
import java.io.IOException;
import java.lang.reflect.RecordComponent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** docs/redis-script-protocol.md lists each algorithm's parameter words; they must match the records. */
class ProtocolDocTest {

    /** Each algorithm's record, from the one list of algorithms. */
    private static final Map<String, Class<?>> RECORDS = new LinkedHashMap<>();

    static {
        for (AlgorithmName a : AlgorithmName.values()) {
            RECORDS.put(a.text(), a.limitType());
        }
    }

    @Test
    void theParameterTableMatchesTheLimitRecords() throws IOException {
        List<String> doc = Files.readAllLines(Path.of("..", "docs", "redis-script-protocol.md"));
        assertThat(RECORDS.keySet()).containsExactlyElementsOf(SluiceScript.ALGORITHMS);
        for (Map.Entry<String, Class<?>> e : RECORDS.entrySet()) {
            String row = doc.stream().filter(l -> l.startsWith("| `" + e.getKey() + "` |")).findFirst()
                    .orElseThrow(() -> new AssertionError("no row for " + e.getKey()));
            String words = row.split("\\|")[2].replaceAll("\\([^)]*\\)", "").trim();
            List<String> expected = Arrays.stream(e.getValue().getRecordComponents()).map(RecordComponent::getName)
                    .filter(n -> !n.equals("name")).toList();
            assertThat(List.of(words.split("\\s+"))).as(e.getKey()).isEqualTo(expected);
        }
    }

    @Test
    void theStorageExamplesAreWhatTheStoreWrites() throws IOException {
        String doc = Files.readString(Path.of("..", "docs", "redis-script-protocol.md"));
        String fp = LimitParams.fingerprint("fixed_window", "3 1000000 epoch 0");
        assertThat(fp).isEqualTo("sCp3P_");
        assertThat(doc).contains("\"" + fp + "|" + Long.toString(1_767_225_600_000_000L, 36) + "|2\"")
                .contains("fixed_window " + fp + " \"3 1000000 epoch 0\"")
                .contains("1 " + LimitParams.fingerprint("fixed_window", "10 1000000 epoch 0") + " \"10 1000000 epoch 0\"")
                .contains("`" + Long.toString(1_000_000, 36) + "` = 10^6")
                .contains("`" + Long.toString(Long.MAX_VALUE, 36) + "`")
                .contains("`" + Long.toString(-99, 36) + "` = -99");
    }
}
