package io.sluice.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The documentation's relative links lead somewhere: every link and image of README.md, docs/ and the module
 * READMEs names a file that exists and, for a Markdown page, a heading it has; and a reader of the README
 * reaches every page of docs/ in at most two clicks.
 */
class DocLinksTest {

    @Test
    void everyRelativeLinkAndAnchorResolves() {
        List<String> broken = new ArrayList<>();
        int checked = 0;
        for (Path page : Docs.pages()) {
            for (Markdown.Link link : Markdown.read(page).links()) {
                if (isExternal(link.target())) {
                    continue;
                }
                checked++;
                problem(page, link.target()).ifPresent(p -> broken.add(link.where() + ": " + link.target() + ": " + p));
            }
        }
        assertThat(checked).as("relative links checked").isGreaterThan(50);
        assertThat(broken).as("broken links").isEmpty();
    }

    @Test
    void aMissingFileAndAMissingHeadingAreBothCaught() {
        // The control, on the real pages: a link to a page that does not exist, and to a heading that does not.
        Path readme = Docs.readme();
        assertThat(problem(readme, "docs/no-such-page.md")).isPresent();
        assertThat(problem(readme, "docs/redis-script-protocol.md#no-such-heading")).isPresent();
        assertThat(problem(readme, "docs/redis-script-protocol.md#replays-never-charged-twice")).isEmpty();
    }

    @Test
    void headingsGetGitHubsAnchors() {
        assertThat(Markdown.slug("Redis CPU per decision (exact mode): each call builds only what it uses"))
                .isEqualTo("redis-cpu-per-decision-exact-mode-each-call-builds-only-what-it-uses");
        assertThat(Markdown.slug("`sluice serve`: the rate-limit service")).isEqualTo("sluice-serve-the-rate-limit-service");
        assertThat(Markdown.slug("Envoy and Istio (gRPC)")).isEqualTo("envoy-and-istio-grpc");
    }

    @Test
    void everyPageOfDocsIsAtMostTwoClicksFromTheReadme() {
        Map<Path, Integer> clicks = new HashMap<>();
        Deque<Path> queue = new ArrayDeque<>();
        clicks.put(Docs.readme(), 0);
        queue.add(Docs.readme());
        while (!queue.isEmpty()) {
            Path page = queue.poll();
            int depth = clicks.get(page);
            if (depth == 2) {
                continue;
            }
            for (Markdown.Link link : Markdown.read(page).links()) {
                Optional<Path> next = markdownTarget(page, link.target());
                if (next.isPresent() && !clicks.containsKey(next.get())) {
                    clicks.put(next.get(), depth + 1);
                    queue.add(next.get());
                }
            }
        }
        List<String> unreachable = Markdown.pagesUnder(Docs.docsDir()).stream()
                .map(p -> p.toAbsolutePath().normalize()).filter(p -> !clicks.containsKey(p))
                .map(Docs::relative).toList();
        assertThat(unreachable).as("pages of docs/ more than two clicks from README.md").isEmpty();
    }

    @Test
    void theIndexLinksEveryPageOfDocs() {
        Path index = Docs.docsDir().resolve("README.md");
        List<Path> linked = Markdown.read(index).links().stream()
                .flatMap(l -> markdownTarget(index, l.target()).stream()).toList();
        List<String> missing = Markdown.pagesUnder(Docs.docsDir()).stream().map(p -> p.toAbsolutePath().normalize())
                .filter(p -> !p.equals(index.toAbsolutePath().normalize()) && !linked.contains(p))
                .map(Docs::relative).toList();
        assertThat(missing).as("pages docs/README.md does not link").isEmpty();
    }

    private static boolean isExternal(String target) {
        return target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*");
    }

    /** What is wrong with {@code target} as written on {@code page}, if anything. */
    private static Optional<String> problem(Path page, String target) {
        int hash = target.indexOf('#');
        String path = hash < 0 ? target : target.substring(0, hash);
        String anchor = hash < 0 ? null : target.substring(hash + 1);
        Path file = path.isEmpty() ? page
                : page.toAbsolutePath().getParent().resolve(URLDecoder.decode(path, StandardCharsets.UTF_8)).normalize();
        if (!Files.exists(file)) {
            return Optional.of("no such file " + Docs.relative(file));
        }
        if (anchor != null && file.toString().endsWith(".md") && !Markdown.read(file).anchors().contains(anchor)) {
            return Optional.of("no heading with anchor #" + anchor + " in " + Docs.relative(file));
        }
        return Optional.empty();
    }

    /** The Markdown page a link opens (a directory opens its README.md), if it is a relative link to one. */
    private static Optional<Path> markdownTarget(Path page, String target) {
        if (isExternal(target)) {
            return Optional.empty();
        }
        String path = target.replaceFirst("#.*$", "");
        if (path.isEmpty()) {
            return Optional.empty();
        }
        Path file = page.toAbsolutePath().getParent().resolve(URLDecoder.decode(path, StandardCharsets.UTF_8)).normalize();
        if (Files.isDirectory(file)) {
            file = file.resolve("README.md");
        }
        return file.toString().endsWith(".md") && Files.isRegularFile(file) ? Optional.of(file) : Optional.empty();
    }
}
