package io.sluice.release;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/**
 * Runs the release profile as a release would ({@code mvn -Prelease deploy}, without the network, tests
 * skipped, the modules that are not published left out) and checks what it staged in {@code target/staging-deploy}: for every
 * published artifact its jar (with the licence), its sources, its Javadoc and a POM that carries, itself or
 * through its parent, what Maven Central requires; the BOM lists exactly the artifacts staged.
 */
class StagedArtifactsIT {

    private static final Path ROOT = Path.of("").toAbsolutePath().getParent();
    private static final Path STAGING = ROOT.resolve("target").resolve("staging-deploy");
    private static final Path GROUP = STAGING.resolve("io").resolve("sluice");
    /** Staged, but as POMs only: the parent the modules inherit from, and the BOM. */
    private static final Set<String> POM_ONLY = Set.of("sluice-parent", "sluice-bom");
    /**
     * Staged as a jar without code, as Spring Boot's own starters are: the jar carries the licence and the POM
     * the dependencies; there are no sources to archive or document.
     */
    private static final Set<String> STARTERS = Set.of("sluice-spring-boot-starter");

    @BeforeAll
    static void stage() throws Exception {
        deleteRecursively(STAGING);
        String mavenHome = System.getProperty("maven.home");
        String localRepository = System.getProperty("sluice.localRepository");
        assertThat(mavenHome).as("maven.home (set by the failsafe configuration)").isNotBlank();
        assertThat(localRepository).as("sluice.localRepository (set by the failsafe configuration)").isNotBlank();
        Path target = Path.of("target").toAbsolutePath();
        Files.createDirectories(target);
        // Offline in effect: every repository is mirrored to a directory that does not exist, so nothing is
        // fetched (what the build needs is in the local repository already). Not -o: the deploy plugin refuses
        // to run offline, even to a file: repository. The mirror is named central because the local repository
        // serves artifacts only to the repository id they were downloaded from.
        Path settings = Files.writeString(target.resolve("no-network-settings.xml"), String.join("\n",
                "<settings>",
                "  <localRepository>" + localRepository + "</localRepository>",
                "  <mirrors>",
                "    <mirror><id>central</id><mirrorOf>*</mirrorOf>"
                        + "<url>file:///nonexistent/sluice-release-check</url></mirror>",
                "  </mirrors>",
                "</settings>", ""));
        Path log = target.resolve("staging-deploy.log");
        // What stages nothing is not built again: the modules that are not published (this one, the benchmarks,
        // the image, the docs' tests, the example; their jlink, Jib and shading were most of this build's time)
        // and sluice-cli's launcher jar (not attached; minimizing it is the slowest step left). The enforcer's
        // rules ran on these same modules in the build that runs this test, and the profile adds no dependency.
        String excluded = unpublishedModules().keySet().stream().map(m -> "!" + m).collect(Collectors.joining(","));
        Process maven = new ProcessBuilder(Path.of(mavenHome, "bin", "mvn").toString(), "-B", "-q", "-nsu",
                "-s", settings.toString(), "-Prelease", "-Dmaven.test.skip=true", "-Denforcer.skip=true",
                "-Dsluice.launcher.skip=true", "-pl", excluded, "deploy")
                .directory(ROOT.toFile()).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        // A guard against a hung build, not a measurement.
        if (!maven.waitFor(20, TimeUnit.MINUTES)) {
            maven.destroyForcibly();
            throw new AssertionError("mvn -Prelease deploy did not finish; see " + log);
        }
        assertThat(maven.exitValue()).as("mvn -Prelease deploy: %s", Files.readString(log)).isZero();
    }

    @Test
    void theBomListsExactlyTheStagedArtifacts() throws Exception {
        Element bom = pom(only(versionDir("sluice-bom"), "sluice-bom-.+\\.pom"));
        Set<String> listed = new TreeSet<>();
        for (Element dep : children(child(child(bom, "dependencyManagement"), "dependencies"), "dependency")) {
            assertThat(text(dep, "groupId")).isEqualTo("io.sluice");
            // ${project.version} is read in the BOM's own model when a build imports it: the BOM's version.
            assertThat(text(dep, "version").replace("${project.version}", text(bom, "version")))
                    .isEqualTo(text(bom, "version"));
            listed.add(text(dep, "artifactId"));
        }
        assertThat(listed).isEqualTo(artifacts()).contains("sluice-core", "sluice-redis", "sluice-rules",
                "sluice-micrometer", "sluice-server", "sluice-cli");
        assertThat(bom.getElementsByTagName("parent").getLength()).as("the BOM has no parent").isZero();
        assertRequiredMetadata("sluice-bom", List.of(bom));
    }

    @Test
    void theModulesThatAreNotPublishedAreTheExpectedOnesAndStageNothing() throws Exception {
        Map<String, String> unpublished = unpublishedModules();
        assertThat(unpublished).as("modules with maven.deploy.skip").containsKeys("sluice-bench",
                "sluice-release-check").doesNotContainKeys("sluice-core", "sluice-redis", "sluice-server");
        for (String artifact : unpublished.values()) {
            assertThat(Files.exists(GROUP.resolve(artifact))).as(artifact + " is not published").isFalse();
        }
    }

    @Test
    void everyArtifactHasItsJarSourcesJavadocAndACompletePom() throws Exception {
        assertThat(Files.exists(GROUP.resolve("sluice-bench"))).as("the benchmarks are not published").isFalse();
        Element parent = pom(only(versionDir("sluice-parent"), "sluice-parent-.+\\.pom"));
        for (String artifact : artifacts()) {
            Path dir = versionDir(artifact);
            String a = artifact.replace(".", "\\.");
            Path jar = only(dir, a + "-[0-9][^/]*?(?<!-sources)(?<!-javadoc)\\.jar");
            Element pom = pom(only(dir, a + "-.+\\.pom"));
            if (STARTERS.contains(artifact)) {
                assertThat(entries(jar)).as(jar.toString()).contains("META-INF/LICENSE", "META-INF/NOTICE");
                assertThat(children(child(pom, "dependencies"), "dependency")).as(artifact + " dependencies")
                        .isNotEmpty();
                assertThat(text(pom, "description")).as(artifact + " description").isNotBlank();
                assertRequiredMetadata(artifact, List.of(pom, parent));
                continue;
            }
            Path sources = only(dir, a + "-.+-sources\\.jar");
            Path javadoc = only(dir, a + "-.+-javadoc\\.jar");

            assertThat(entries(jar)).as(jar.toString())
                    .contains("META-INF/LICENSE", "META-INF/NOTICE")
                    .anyMatch(e -> e.startsWith("io/sluice/") && e.endsWith(".class"));
            assertThat(entries(sources)).as(sources.toString()).anyMatch(e -> e.endsWith(".java"));
            assertThat(entries(javadoc)).as(javadoc.toString()).contains("index.html")
                    .anyMatch(e -> e.contains("io/sluice/") && e.endsWith(".html"));
            assertThat(text(child(pom, "parent"), "artifactId")).isEqualTo("sluice-parent");
            assertThat(text(pom, "name")).as(artifact + " name").isNotBlank();
            assertThat(text(pom, "description")).as(artifact + " description").isNotBlank();
            assertRequiredMetadata(artifact, List.of(pom, parent));
        }
    }

    /** What Maven Central requires of a POM, found in it or (for a module) in its parent. */
    private static void assertRequiredMetadata(String artifact, List<Element> chain) {
        assertThat(first(chain, "url")).as(artifact + " url").isNotBlank();
        Element licenses = firstElement(chain, "licenses");
        assertThat(licenses).as(artifact + " licenses").isNotNull();
        assertThat(text(child(licenses, "license"), "name")).isEqualTo("Apache-2.0");
        Element scm = firstElement(chain, "scm");
        assertThat(scm).as(artifact + " scm").isNotNull();
        assertThat(text(scm, "url")).isNotBlank();
        assertThat(text(scm, "connection")).startsWith("scm:git:");
        Element developers = firstElement(chain, "developers");
        assertThat(developers).as(artifact + " developers").isNotNull();
        assertThat(text(child(developers, "developer"), "name")).isNotBlank();
    }

    /**
     * The modules of the root POM that set {@code maven.deploy.skip} to true (so stage nothing), by their
     * directory, with their artifact ids.
     */
    private static Map<String, String> unpublishedModules() throws Exception {
        Map<String, String> unpublished = new TreeMap<>();
        for (Element module : children(child(pom(ROOT.resolve("pom.xml")), "modules"), "module")) {
            String dir = module.getTextContent().strip();
            Element pom = pom(ROOT.resolve(dir).resolve("pom.xml"));
            if ("true".equals(text(child(pom, "properties"), "maven.deploy.skip"))) {
                unpublished.put(dir, text(pom, "artifactId"));
            }
        }
        return unpublished;
    }

    /** The artifacts staged with jars: every directory under io/sluice but the parent's and the BOM's. */
    private static Set<String> artifacts() throws IOException {
        try (Stream<Path> dirs = Files.list(GROUP)) {
            Set<String> names = new TreeSet<>();
            dirs.filter(Files::isDirectory).map(d -> d.getFileName().toString())
                    .filter(n -> !POM_ONLY.contains(n)).forEach(names::add);
            return names;
        }
    }

    /** The one version directory of an artifact. */
    private static Path versionDir(String artifact) throws IOException {
        try (Stream<Path> dirs = Files.list(GROUP.resolve(artifact))) {
            List<Path> versions = dirs.filter(Files::isDirectory).toList();
            assertThat(versions).as(artifact + " versions").hasSize(1);
            return versions.get(0);
        }
    }

    /** The one file in {@code dir} whose name matches {@code regex}. */
    private static Path only(Path dir, String regex) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            List<Path> found = files.filter(f -> f.getFileName().toString().matches(regex)).toList();
            assertThat(found).as(dir + ": " + regex).hasSize(1);
            return found.get(0);
        }
    }

    private static List<String> entries(Path jar) throws IOException {
        try (ZipFile zip = new ZipFile(jar.toFile())) {
            return zip.stream().map(ZipEntry::getName).toList();
        }
    }

    private static Element pom(Path file) throws Exception {
        return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(file.toFile()).getDocumentElement();
    }

    private static List<Element> children(Element parent, String name) {
        List<Element> found = new ArrayList<>();
        if (parent == null) {
            return found;
        }
        for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element e && e.getTagName().equals(name)) {
                found.add(e);
            }
        }
        return found;
    }

    private static Element child(Element parent, String name) {
        List<Element> found = children(parent, name);
        return found.isEmpty() ? null : found.get(0);
    }

    private static String text(Element parent, String name) {
        Element e = child(parent, name);
        return e == null ? null : e.getTextContent().strip();
    }

    private static Element firstElement(List<Element> chain, String name) {
        return chain.stream().map(p -> child(p, name)).filter(e -> e != null).findFirst().orElse(null);
    }

    private static String first(List<Element> chain, String name) {
        Element e = firstElement(chain, name);
        return e == null ? null : e.getTextContent().strip();
    }

    private static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
