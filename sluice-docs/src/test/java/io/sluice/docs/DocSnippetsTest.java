package io.sluice.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every Java snippet of README.md and docs/ compiles as shown, with its own imports and nothing else. */
class DocSnippetsTest {

    @TempDir
    Path tmp;

    @Test
    void everyJavaSnippetCompilesAsShown() {
        List<JavaSnippet> snippets = JavaSnippet.all();
        // The README's example and the guide's and references' examples at least; a lost fence would drop them.
        assertThat(snippets).hasSizeGreaterThanOrEqualTo(8);
        List<String> errors = new ArrayList<>();
        for (int i = 0; i < snippets.size(); i++) {
            errors.addAll(snippets.get(i).compileInto(tmp.resolve("snippet" + i)));
        }
        assertThat(errors).as("compiler errors in the documentation's Java snippets").isEmpty();
    }

    @Test
    void aSnippetLeaningOnAHelperItDoesNotDeclareIsRefused() {
        // The control: the README's old example called helpers only its test had; such a snippet must fail here.
        JavaSnippet snippet = new JavaSnippet(new Markdown.CodeBlock(tmp.resolve("page.md"), 10, "java", """
                import io.sluice.Decision;

                Decision d = limiter.tryAcquire("user:42");
                if (!d.allowed()) {
                    respond429(d.retryAfterSeconds());
                }
                """));
        assertThat(snippet.isWholeFile()).isFalse();
        List<String> errors = snippet.compileInto(tmp.resolve("control"));
        assertThat(errors).anySatisfy(e -> assertThat(e).contains("page.md:13:").contains("limiter"))
                .anySatisfy(e -> assertThat(e).contains("page.md:15:").contains("respond429"));
    }

    @Test
    void theReadmeShowsACompleteDependencyOnThisVersion() throws IOException {
        String version = projectVersion();
        List<String> xml = Markdown.read(Docs.readme()).codeBlocks().stream()
                .filter(b -> b.language().equals("xml")).map(Markdown.CodeBlock::code).toList();
        assertThat(xml).anySatisfy(code -> assertThat(code).contains("<groupId>io.sluice</groupId>",
                "<artifactId>sluice-core</artifactId>", "<version>" + version + "</version>"));
        assertThat(Files.readString(Docs.readme())).contains("mvn install");
    }

    /** The version of the parent POM, the one every module has. */
    private static String projectVersion() throws IOException {
        String pom = Files.readString(Docs.root().resolve("pom.xml"));
        Matcher m = Pattern.compile("<artifactId>sluice-parent</artifactId>\\s*<version>([^<]+)</version>").matcher(pom);
        assertThat(m.find()).as("the parent POM's version").isTrue();
        return m.group(1);
    }
}
