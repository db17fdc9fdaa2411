package io.sluice.docs;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.lang.reflect.InvocationTargetException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

/**
 * A Java code block of the documentation, compiled as a reader would paste it. Two shapes are accepted: a whole
 * source file (imports and a top-level class, record, interface or enum, compiled as it stands), or imports
 * followed by statements, which compile as the body of a method that may throw any exception. Either way every
 * name it uses must come from its own imports or declarations: the documentation offers no hidden helpers.
 */
final class JavaSnippet {

    /** A top-level type declaration, at the start of a line (so not a nested or local one). */
    private static final Pattern TYPE = Pattern.compile(
            "(?m)^(?:public\\s+|final\\s+|abstract\\s+|sealed\\s+)*(?:class|record|interface|enum)\\s+(\\w+)");
    private static final Pattern PUBLIC_TYPE = Pattern.compile(
            "(?m)^public\\s+(?:final\\s+|abstract\\s+|sealed\\s+)*(?:class|record|interface|enum)\\s+(\\w+)");
    static final String WRAPPER = "Snippet";

    private final Markdown.CodeBlock block;
    private final String typeName;
    private final String source;

    JavaSnippet(Markdown.CodeBlock block) {
        this.block = block;
        Matcher publicType = PUBLIC_TYPE.matcher(block.code());
        Matcher anyType = TYPE.matcher(block.code());
        if (publicType.find()) {
            typeName = publicType.group(1);
            source = block.code();
        } else if (anyType.find()) {
            typeName = anyType.group(1);
            source = block.code();
        } else {
            typeName = WRAPPER;
            source = asMethodBody(block.code());
        }
    }

    /** Imports stay at the top; everything else becomes the body of {@code Snippet.snippet()}. */
    private static String asMethodBody(String code) {
        StringBuilder imports = new StringBuilder();
        StringBuilder body = new StringBuilder();
        for (String line : code.split("\n", -1)) {
            (line.startsWith("import ") ? imports : body).append(line).append('\n');
        }
        return imports + "class " + WRAPPER + " {\n    static void snippet() throws Exception {\n" + body
                + "    }\n}\n";
    }

    Markdown.CodeBlock block() {
        return block;
    }

    /** The class that holds the code: the snippet's own top-level type, or the wrapper's. */
    String typeName() {
        return typeName;
    }

    boolean isWholeFile() {
        return !typeName.equals(WRAPPER);
    }

    /**
     * Compiles the snippet against this test's class path (every Sluice module and their dependencies) into
     * {@code out}.
     *
     * @return the compiler's errors, each with the documentation's file and line; empty when it compiled
     */
    List<String> compileInto(Path out) {
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        if (compiler == null) {
            throw new IllegalStateException("no Java compiler in this runtime; the documentation tests need a JDK");
        }
        try {
            Path dir = Files.createDirectories(out.resolve("src"));
            Path file = dir.resolve(typeName + ".java");
            Files.writeString(file, source);
            DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
            try (StandardJavaFileManager files = compiler.getStandardFileManager(diagnostics, Locale.ROOT,
                    StandardCharsets.UTF_8)) {
                List<String> options = List.of("-classpath", System.getProperty("java.class.path"),
                        "-d", out.toString(), "-proc:none", "--release", "17");
                compiler.getTask(null, files, diagnostics, options, null, files.getJavaFileObjects(file)).call();
            }
            int shift = isWholeFile() ? 0 : 2;   // the wrapper's two lines before the body
            return diagnostics.getDiagnostics().stream().filter(d -> d.getKind() == Diagnostic.Kind.ERROR)
                    .map(d -> block.where().replaceFirst(":\\d+$", "") + ":"
                            + (block.line() + d.getLineNumber() - shift) + ": " + d.getMessage(Locale.ROOT))
                    .collect(Collectors.toList());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Runs a compiled whole-file snippet's {@code main(String[])} with {@code args}.
     *
     * @return what it printed on standard output
     */
    String runMain(Path out, String... args) throws Exception {
        return capture(out, loader -> loader.loadClass(typeName).getMethod("main", String[].class)
                .invoke(null, (Object) args));
    }

    private interface Run {
        void run(ClassLoader loader) throws Exception;
    }

    /** Runs {@code run} with the compiled classes loadable, and returns what it printed on standard output. */
    private static String capture(Path out, Run run) throws Exception {
        PrintStream stdout = System.out;
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        try (URLClassLoader loader = new URLClassLoader(new URL[] {out.toUri().toURL()},
                JavaSnippet.class.getClassLoader())) {
            System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
            run.run(loader);
        } catch (InvocationTargetException e) {
            throw e.getCause() instanceof Exception cause ? cause : e;
        } finally {
            System.setOut(stdout);
        }
        return printed.toString(StandardCharsets.UTF_8);
    }

    /**
     * Runs a compiled method-body snippet.
     *
     * @return what it printed on standard output
     */
    String runSnippet(Path out) throws Exception {
        if (isWholeFile()) {
            throw new IllegalStateException(block.where() + " is a whole file; run its main");
        }
        return capture(out, loader -> {
            var method = loader.loadClass(WRAPPER).getDeclaredMethod("snippet");
            method.setAccessible(true);
            method.invoke(null);
        });
    }

    /** Every Java block of every documentation page. */
    static List<JavaSnippet> all() {
        return Docs.pages().stream().map(Markdown::read).flatMap(p -> p.javaBlocks().stream())
                .map(JavaSnippet::new).toList();
    }

    /** The one Java block of {@code page} that declares the top-level type {@code typeName}. */
    static JavaSnippet declaring(Path page, String typeName) {
        List<JavaSnippet> found = Markdown.read(page).javaBlocks().stream().map(JavaSnippet::new)
                .filter(s -> s.typeName().equals(typeName)).toList();
        if (found.size() != 1) {
            throw new AssertionError(Docs.relative(page) + " has " + found.size() + " Java blocks declaring "
                    + typeName + "; expected one");
        }
        return found.get(0);
    }
}
