package io.sluice.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * One Markdown page of the repository's documentation, read as GitHub renders it: fenced code blocks, links and
 * the anchors its headings get. Only what the documentation tests need; not a Markdown parser.
 */
record Markdown(Path file, List<String> lines) {

    /** A fenced code block: its language (the word after the fence), its text, and its opening fence's line. */
    record CodeBlock(Path file, int line, String language, String code) {
        String where() {
            return Docs.relative(file) + ":" + line;
        }
    }

    /** A link or image target written on line {@code line} (1-based). */
    record Link(Path file, int line, String target) {
        String where() {
            return Docs.relative(file) + ":" + line;
        }
    }

    private static final Pattern FENCE = Pattern.compile("^(\\s*)(```+|~~~+)\\s*([A-Za-z0-9_+-]*).*$");
    /** {@code [text](target)} and {@code ![alt](target)}; the target ends at whitespace (a title may follow). */
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");
    private static final Pattern INLINE_CODE = Pattern.compile("`+[^`]*`+");
    private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(.*?)\\s*#*\\s*$");

    static Markdown read(Path file) {
        try {
            return new Markdown(file, Files.readAllLines(file));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Every fenced code block, in order. */
    List<CodeBlock> codeBlocks() {
        List<CodeBlock> blocks = new ArrayList<>();
        String fence = null;
        String language = null;
        int start = 0;
        StringBuilder code = new StringBuilder();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            Matcher m = FENCE.matcher(line);
            if (fence == null && m.matches()) {
                fence = m.group(2);
                language = m.group(3).toLowerCase(Locale.ROOT);
                start = i + 1;
                code.setLength(0);
            } else if (fence != null && line.strip().equals(fence)) {
                blocks.add(new CodeBlock(file, start, language, code.toString()));
                fence = null;
            } else if (fence != null) {
                code.append(line).append('\n');
            }
        }
        return blocks;
    }

    /** The code blocks fenced as {@code java}. */
    List<CodeBlock> javaBlocks() {
        return codeBlocks().stream().filter(b -> b.language().equals("java")).toList();
    }

    /** Every link and image target outside code blocks and inline code. */
    List<Link> links() {
        List<Link> links = new ArrayList<>();
        forEachProseLine((i, line) -> {
            Matcher m = LINK.matcher(INLINE_CODE.matcher(line).replaceAll("``"));
            while (m.find()) {
                links.add(new Link(file, i + 1, m.group(1)));
            }
        });
        return links;
    }

    /** The anchors GitHub gives this page's headings ({@code #the-heading}), duplicates numbered as GitHub does. */
    Set<String> anchors() {
        Set<String> anchors = new LinkedHashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        forEachProseLine((i, line) -> {
            Matcher m = HEADING.matcher(line);
            if (m.matches()) {
                String slug = slug(m.group(1));
                int n = seen.merge(slug, 1, Integer::sum) - 1;
                anchors.add(n == 0 ? slug : slug + "-" + n);
            }
        });
        return anchors;
    }

    /**
     * GitHub's heading slug: the heading's text (link targets and inline-code ticks dropped), lower case, every
     * character that is not a letter, digit, space, hyphen or underscore removed, spaces turned into hyphens.
     */
    static String slug(String heading) {
        String text = heading.replaceAll("\\[([^\\]]*)\\]\\([^)]*\\)", "$1");
        StringBuilder slug = new StringBuilder();
        text.toLowerCase(Locale.ROOT).codePoints().forEach(c -> {
            if (Character.isLetterOrDigit(c) || c == '-' || c == '_') {
                slug.appendCodePoint(c);
            } else if (c == ' ') {
                slug.append('-');
            }
        });
        return slug.toString();
    }

    private interface LineVisitor {
        void visit(int index, String line);
    }

    private void forEachProseLine(LineVisitor visitor) {
        String fence = null;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            Matcher m = FENCE.matcher(line);
            if (fence == null && m.matches()) {
                fence = m.group(2);
            } else if (fence != null && line.strip().equals(fence)) {
                fence = null;
            } else if (fence == null) {
                visitor.visit(i, line);
            }
        }
    }

    /** Every Markdown page under {@code dir}, sorted. */
    static List<Path> pagesUnder(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            return files.filter(p -> p.toString().endsWith(".md")).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
