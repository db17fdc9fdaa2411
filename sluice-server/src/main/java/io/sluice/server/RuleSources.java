package io.sluice.server;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * What {@code --rules} names: rule files, and directories whose {@code *.yaml} and {@code *.yml} files are rule
 * files. A directory is read anew each time, so a file that is added, changed or removed there is seen by the
 * next reload ({@link RuleReloader}).
 *
 * <p>In a directory, only regular files (or links to them) whose names end in {@code .yaml} or {@code .yml} count,
 * in name order; names starting with a dot are skipped: editors' swap and backup files, and the {@code ..data}
 * links and timestamped directories Kubernetes keeps beside a mounted ConfigMap's files.
 */
final class RuleSources {

    private final List<Path> given;

    RuleSources(List<Path> given) {
        this.given = List.copyOf(given);
    }

    /** The rule files now: the files given, and each directory's rule files in name order. */
    List<Path> files() throws IOException {
        List<Path> out = new ArrayList<>();
        for (Path p : given) {
            if (Files.isDirectory(p)) {
                out.addAll(inDirectory(p));
            } else {
                out.add(p);
            }
        }
        return out;
    }

    /** The names and texts of {@link #files()}, read together. */
    Read read() throws IOException {
        List<Path> files = files();
        List<String> names = new ArrayList<>(files.size());
        List<String> texts = new ArrayList<>(files.size());
        for (Path f : files) {
            names.add(f.toString());
            texts.add(Files.readString(f, StandardCharsets.UTF_8));
        }
        return new Read(names, texts);
    }

    /** The rule files' names and texts. */
    record Read(List<String> names, List<String> texts) {}

    /**
     * What changes when a rule file does: the list of files, and each one's modification time, size and identity
     * (inode), following symlinks.
     */
    List<Object> fingerprint() throws IOException {
        List<Path> files = files();
        List<Object> out = new ArrayList<>(files.size() * 4);
        for (Path f : files) {
            BasicFileAttributes a = Files.readAttributes(f, BasicFileAttributes.class);
            out.add(f.toString());
            out.add(a.lastModifiedTime());
            out.add(a.size());
            out.add(Objects.toString(a.fileKey()));
        }
        return out;
    }

    private static List<Path> inDirectory(Path dir) throws IOException {
        List<Path> files = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path p : entries) {
                String name = p.getFileName().toString();
                String lower = name.toLowerCase(Locale.ROOT);
                if (!name.startsWith(".") && (lower.endsWith(".yaml") || lower.endsWith(".yml"))
                        && Files.isRegularFile(p)) {
                    files.add(p);
                }
            }
        }
        files.sort(null);
        return files;
    }
}
