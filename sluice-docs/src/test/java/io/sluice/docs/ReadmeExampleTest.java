package io.sluice.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's Java example, compiled from the README as a reader pastes it and run: it prints what the README
 * says it prints. Also the guide's manual-clock example, which prints the waits it describes.
 */
class ReadmeExampleTest {

    @TempDir
    Path tmp;

    @Test
    void theReadmeExampleRunsAsTheReadmeSays() throws Exception {
        JavaSnippet example = JavaSnippet.declaring(Docs.readme(), "PartnerApiLimit");
        assertThat(example.compileInto(tmp)).isEmpty();

        List<String> lines = example.runMain(tmp).lines().toList();

        // Seven calls within far less than the bucket's 2 s refill: five pass, two are refused by the burst limit.
        // The Retry-After is 2 s, or 1 s if more than a second passed since the fifth call (a paused JVM).
        assertThat(lines).hasSize(7);
        assertThat(lines.subList(0, 5)).containsExactly(
                "call 1: allowed", "call 2: allowed", "call 3: allowed", "call 4: allowed", "call 5: allowed");
        assertThat(lines.get(5)).matches("call 6: 429, Retry-After: [12] s \\(burst\\)");
        assertThat(lines.get(6)).matches("call 7: 429, Retry-After: [12] s \\(burst\\)");
        assertThat(Markdown.read(Docs.readme()).lines())
                .contains("Calls 1 to 5 are allowed; calls 6 and 7 print `429, Retry-After: 2 s (burst)`. To share the limit between");
    }

    @Test
    void theManualClockExamplePrintsTheWaitsTheGuideShows() throws Exception {
        Path page = Docs.docsDir().resolve("guide/concepts.md");
        List<JavaSnippet> withClock = Markdown.read(page).javaBlocks().stream().map(JavaSnippet::new)
                .filter(s -> s.block().code().contains("new ManualClock()")).toList();
        assertThat(withClock).hasSize(1);
        JavaSnippet example = withClock.get(0);
        assertThat(example.compileInto(tmp)).isEmpty();

        String printed = example.runSnippet(tmp);

        assertThat(printed.strip()).isEqualTo("false true [1000000]");
        assertThat(String.join("\n", Markdown.read(page).lines())).contains("It prints `false true [1000000]`");
    }
}
