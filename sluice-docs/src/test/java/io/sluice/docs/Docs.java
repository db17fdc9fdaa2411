package io.sluice.docs;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Where the documentation lies: README.md at the root of the checkout, docs/, and each module's README. */
final class Docs {

    private Docs() {}

    /** The checkout's root: the parent of this module's directory (tests run in the module's directory). */
    static Path root() {
        Path root = Path.of("").toAbsolutePath().getParent();
        if (!Files.isRegularFile(root.resolve("README.md")) || !Files.isDirectory(root.resolve("docs"))) {
            throw new IllegalStateException("no README.md and docs/ in " + root + "; run the tests from sluice-docs/");
        }
        return root;
    }

    static Path readme() {
        return root().resolve("README.md");
    }

    static Path docsDir() {
        return root().resolve("docs");
    }

    /** README.md, every page under docs/, and the READMEs of the modules. */
    static List<Path> pages() {
        List<Path> pages = new ArrayList<>();
        pages.add(readme());
        pages.addAll(Markdown.pagesUnder(docsDir()));
        try (var modules = Files.list(root())) {
            modules.map(m -> m.resolve("README.md")).filter(Files::isRegularFile).sorted().forEach(pages::add);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return pages;
    }

    /** A page's path from the root, for messages: {@code docs/guide/concepts.md}. */
    static String relative(Path file) {
        return root().relativize(file.toAbsolutePath().normalize()).toString().replace('\\', '/');
    }
}
