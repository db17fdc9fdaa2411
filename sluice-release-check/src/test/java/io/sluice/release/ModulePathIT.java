package io.sluice.release;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The library modules on the module path: a small program in a module of its own reads a rule file
 * (io.sluice.rules) and decides on the in-memory store (io.sluice); a program that reaches for an internal
 * package does not compile; each library module's descriptor exports its API package only (and core its
 * internal packages to the Redis store alone, the Redis store its internal package to the server and the
 * remote client).
 */
class ModulePathIT {

    @TempDir
    Path dir;

    /** The jars of this test's class path whose file names start with one of the prefixes. */
    private static String modulePath(String... prefixes) {
        List<String> jars = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            String name = Path.of(entry).getFileName().toString();
            if (name.endsWith(".jar") && Arrays.stream(prefixes).anyMatch(name::startsWith)) {
                jars.add(entry);
            }
        }
        assertThat(jars).as("jars for %s", Arrays.toString(prefixes)).hasSizeGreaterThanOrEqualTo(prefixes.length);
        return String.join(File.pathSeparator, jars);
    }

    private static final String[] CORE_AND_RULES = {"sluice-core-", "sluice-rules-", "jackson-databind-",
            "jackson-core-", "jackson-annotations-", "jackson-dataformat-yaml-", "snakeyaml-"};

    private static Path source(String name) throws Exception {
        return Path.of(ModulePathIT.class.getResource("/module-path/" + name).toURI());
    }

    private static String javac(Path out, Path sources, String modulePath) throws Exception {
        List<String> args = new ArrayList<>(List.of("-d", out.toString(), "--module-path", modulePath));
        try (Stream<Path> files = Files.walk(sources)) {
            files.filter(f -> f.toString().endsWith(".java")).forEach(f -> args.add(f.toString()));
        }
        ByteArrayOutputStream messages = new ByteArrayOutputStream();
        int code = ToolProvider.getSystemJavaCompiler().run(null, messages, messages, args.toArray(new String[0]));
        return code + " " + messages.toString(StandardCharsets.UTF_8);
    }

    private static String java(String... args) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        // A guard against a hung process, not a measurement.
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(output).isZero();
        return output;
    }

    @Test
    void aProgramOnTheModulePathReadsRulesAndDecides() throws Exception {
        String path = modulePath(CORE_AND_RULES);
        Path classes = dir.resolve("example");
        assertThat(javac(classes, source("example"), path)).startsWith("0 ");

        String output = java("--module-path", path + File.pathSeparator + classes, "-m", "example/example.Main");

        assertThat(output.strip()).isEqualTo("io.sluice ++. internal exported: false");
    }

    @Test
    void internalPackagesAreNotVisible() throws Exception {
        String result = javac(dir.resolve("internal"), source("internal"), modulePath(CORE_AND_RULES));
        assertThat(result).doesNotStartWith("0 ").contains("package io.sluice.internal is not visible");
    }

    @Test
    void eachLibraryModuleExportsItsApiOnly() throws Exception {
        String path = modulePath("sluice-core-", "sluice-rules-", "sluice-redis-", "sluice-micrometer-");
        assertThat(exports(path, "io.sluice")).containsExactlyInAnyOrder("exports io.sluice", "exports io.sluice.http",
                "qualified exports io.sluice.internal to io.sluice.redis",
                "qualified exports io.sluice.internal.algorithm to io.sluice.redis");
        assertThat(exports(path, "io.sluice.rules")).containsExactly("exports io.sluice.rules");
        assertThat(exports(path, "io.sluice.redis")).containsExactlyInAnyOrder("exports io.sluice.redis",
                "qualified exports io.sluice.redis.internal to io.sluice.client io.sluice.server");
        assertThat(exports(path, "io.sluice.micrometer")).containsExactly("exports io.sluice.micrometer");
    }

    /**
     * The module's export lines as {@code java --describe-module} prints them, with a qualified export's target
     * modules sorted: it prints them in the order of a set, which differs between runs.
     */
    private static List<String> exports(String modulePath, String module) throws Exception {
        return java("--module-path", modulePath, "--describe-module", module).lines().map(String::strip)
                .filter(l -> l.startsWith("exports ") || l.startsWith("qualified exports "))
                .map(ModulePathIT::sortedTargets).toList();
    }

    private static String sortedTargets(String exportLine) {
        int to = exportLine.indexOf(" to ");
        if (to < 0) {
            return exportLine;
        }
        String targets = Arrays.stream(exportLine.substring(to + 4).split(" ")).sorted()
                .collect(java.util.stream.Collectors.joining(" "));
        return exportLine.substring(0, to + 4) + targets;
    }
}
