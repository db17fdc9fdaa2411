package io.sluice.cli;

import static io.sluice.cli.ReplayRun.replay;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code sluice replay} takes the envoyproxy/ratelimit configurations {@code sluice serve} takes. */
class ReplayEnvoyTest {

    @TempDir
    Path dir;

    @Test
    void eachCountedBlockIsARuleNamedByItsFullKey() throws IOException {
        Path envoy = Files.writeString(dir.resolve("envoy.yaml"), String.join("\n",
                "domain: messaging",
                "descriptors:",
                "  - key: message_type",
                "    value: marketing",
                "    descriptors:",
                "      - key: to_number",
                "        rate_limit: {unit: minute, requests_per_unit: 2}",
                "  - key: internal",
                "    rate_limit: {unlimited: true}",
                ""));
        String rule = "messaging.message_type_marketing.to_number";
        Path trace = Files.writeString(dir.resolve("trace.jsonl"), String.join("\n",
                "{\"t_ms\": 60000, \"key\": \"206\", \"rule\": \"" + rule + "\"}",
                "{\"t_ms\": 60001, \"key\": \"206\", \"rule\": \"" + rule + "\"}",
                "{\"t_ms\": 60002, \"key\": \"206\", \"rule\": \"" + rule + "\"}",
                "{\"t_ms\": 120000, \"key\": \"206\", \"rule\": \"" + rule + "\"}",
                ""));

        ReplayRun run = replay("--rules", envoy, "--trace", trace, "--summary");

        assertThat(run.exitCode()).as(run.err()).isZero();
        // Two a minute in epoch-aligned windows: the third is rejected, the next minute admits again.
        assertThat(run.out()).contains(rule).containsPattern(rule + "\\s+#\\s+4\\s+3\\s+1 ");

        Path unknown = Files.writeString(dir.resolve("unknown.jsonl"),
                "{\"t_ms\": 1, \"key\": \"k\", \"rule\": \"messaging.internal\"}\n");
        ReplayRun refused = replay("--rules", envoy, "--trace", unknown);
        assertThat(refused.exitCode()).isNotZero();
        assertThat(refused.err()).contains("messaging.internal").contains(rule);
    }
}
