package io.sluice.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.AlgorithmName;
import io.sluice.FixedWindow;
import io.sluice.Rule;
import io.sluice.TokenBucket;
import java.time.Duration;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class SluiceScriptTest {

    private final SluiceScript script = SluiceScript.get();

    @Test
    void partsAreConcatenatedInTheFixedOrder() {
        List<String> paths = script.parts().stream().map(SluiceScript.Part::path).toList();
        int libraries = SluiceScript.LIBRARIES.size() + SluiceScript.ON_FIRST_USE.size();
        List<String> expectedLibraries = java.util.stream.Stream.concat(SluiceScript.LIBRARIES.stream(),
                SluiceScript.ON_FIRST_USE.stream()).map(n -> "lib/" + n + ".lua").toList();
        assertThat(paths.subList(0, libraries)).isEqualTo(expectedLibraries);
        assertThat(paths.get(paths.size() - 1)).isEqualTo("rule.lua");
        assertThat(paths.get(paths.size() - 2)).as("a rule's lockout, before the dispatcher").isEqualTo("lockout.lua");
        assertThat(paths.get(paths.size() - 3)).as("the dispatcher's fast path, before the lockout")
                .isEqualTo("rule_one.lua");
        assertThat(paths.get(paths.size() - 4)).as("tickets, before the fast path").isEqualTo("settle.lua");
        List<String> algorithms = paths.subList(libraries, paths.size() - 4);
        assertThat(algorithms).contains("algorithms/fixed_window.lua");
        // The algorithm files follow SluiceScript.ALGORITHMS, which is AlgorithmName's list: every one is ported.
        List<String> expected = AlgorithmName.names().stream().map(n -> "algorithms/" + n + ".lua").toList();
        assertThat(algorithms).isEqualTo(expected);
        assertThat(script.algorithms()).containsExactlyInAnyOrderElementsOf(AlgorithmName.names());
        assertThat(script.source()).startsWith("-- lib/core.lua");
        // Every library file in the resources is in one of the two lists.
        assertThat(script.library()).doesNotContain(SluiceScript.LOADER).contains("setmetatable(sluice");
    }

    @Test
    void anAlgorithmWithoutItsLuaPortFailsTheAssemblyNamingTheFile() {
        // What a twelfth AlgorithmName constant without algorithms/<name>.lua would do to the loader.
        List<String> withAnUnported = new java.util.ArrayList<>(AlgorithmName.names());
        withAnUnported.add("twelfth_algorithm");
        assertThatThrownBy(() -> SluiceScript.assemble("rule.lua", withAnUnported))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("sluice-redis is missing its script resource /io/sluice/redis/lua/algorithms/"
                        + "twelfth_algorithm.lua");
    }

    @Test
    void assemblyIsDeterministicSoTheShaIsStable() {
        SluiceScript again = SluiceScript.assemble();
        assertThat(again.source()).isEqualTo(script.source());
        assertThat(again.sha1()).isEqualTo(script.sha1()).matches("[0-9a-f]{40}");
    }

    @Test
    void everyAlgorithmFileRegistersItsOwnNameInADoBlock() {
        for (String name : script.algorithms()) {
            String text = partText("algorithms/" + name + ".lua");
            assertThat(text).as(name).contains("ALG[\"" + name + "\"] = ");
            assertThat(Pattern.compile("(?m)^do$").matcher(text).find()).as(name + " wraps its locals in do ... end")
                    .isTrue();
            assertThat(Pattern.compile("(?m)^ALG\\[").matcher(text).find()).as(name).isFalse();
        }
        assertThat(script.algorithms()).contains("fixed_window");
    }

    @Test
    void everyHelperAPartUsesIsDefinedAndEachOneBuiltOnFirstUseIsNamedInItsBranch() {
        // The libraries of LIBRARIES define helpers at the top level; those of ON_FIRST_USE are each one branch of
        // the generated __index function of sluice's metatable, entered when a call first reads one of the names its
        // condition lists. A helper defined in a branch whose condition does not name it would read as nil until
        // another name of its group had been read: every such definition must be named in its own branch's condition.
        String[] lines = script.source().split("\n", -1);
        java.util.Set<String> defined = new java.util.HashSet<>();
        Pattern definition = Pattern.compile("(?m)^function sluice\\.([a-z_0-9]+)\\(");
        for (String lib : SluiceScript.LIBRARIES) {
            java.util.regex.Matcher eager = definition.matcher(partText("lib/" + lib + ".lua"));
            while (eager.find()) {
                defined.add(eager.group(1));
            }
        }
        defined.add("FOREVER");
        defined.add("algorithm");   // the loader SluiceScript generates
        int groups = 0;
        for (SluiceScript.Part part : script.parts()) {
            String lib = part.path().replaceAll("^lib/(.*)\\.lua$", "$1");
            if (!SluiceScript.ON_FIRST_USE.contains(lib)) {
                continue;
            }
            String condition = lines[part.firstLine() - 2];
            assertThat(condition).as(part.path()).matches("(if|elseif) name == .* then");
            java.util.regex.Matcher def = definition.matcher(partText(part.path()));
            while (def.find()) {
                assertThat(condition).as("the branch defining sluice." + def.group(1))
                        .contains("name == \"" + def.group(1) + "\"");
                defined.add(def.group(1));
            }
            groups++;
        }
        assertThat(groups).isEqualTo(SluiceScript.ON_FIRST_USE.size());
        // Fields the algorithm files add themselves (smooth_bursty's shared code).
        Pattern assigned = Pattern.compile("(?m)^\\s*(?:function )?(?:sluice|S)\\.([A-Za-z_0-9]+)(?: = |\\()");
        Pattern used = Pattern.compile("\\b(?:sluice|S)\\.([A-Za-z_][A-Za-z_0-9]*)");
        for (SluiceScript script : List.of(SluiceScript.get(), SluiceScript.sync())) {
            for (SluiceScript.Part part : script.parts()) {
                String text = script.part(part.path());
                java.util.regex.Matcher a = assigned.matcher(text);
                while (a.find()) {
                    defined.add(a.group(1));
                }
            }
            for (SluiceScript.Part part : script.parts()) {
                String code = script.part(part.path()).replaceAll("--[^\\n]*", "");
                java.util.regex.Matcher u = used.matcher(code);
                while (u.find()) {
                    assertThat(defined).as(part.path() + " uses sluice." + u.group(1)).contains(u.group(1));
                }
            }
        }
    }

    @Test
    void everyFunctionOfAPortIsNamedAfterItsJavaMethodOrMarkedLuaOnly() throws ClassNotFoundException {
        // A reader puts algorithms/<name>.lua beside the Java class its header names: a function there either has
        // the name of a method of that class (or of its nested classes and superclasses), or the comment above it
        // starts with "-- Lua only (why)". M.parse is the Java constructor (docs/redis-script-protocol.md).
        Pattern ported = Pattern.compile("port of (?:io\\.sluice\\.internal\\.algorithm\\.)?([A-Z][A-Za-z]+)");
        Pattern function = Pattern.compile("^\\s*(?:local function ([A-Za-z_0-9]+)|function M\\.([A-Za-z_0-9]+))\\(");
        int marked = 0;
        for (String name : script.algorithms()) {
            String text = partText("algorithms/" + name + ".lua");
            java.util.regex.Matcher header = ported.matcher(text);
            assertThat(header.find()).as(name + " names the Java class it ports").isTrue();
            java.util.Set<String> methods = methodNames(Class.forName("io.sluice.internal.algorithm." + header.group(1)));
            assertThat(methods).as(name).isNotEmpty();
            String[] lines = text.split("\n", -1);
            for (int i = 0; i < lines.length; i++) {
                java.util.regex.Matcher f = function.matcher(lines[i]);
                if (!f.find()) {
                    continue;
                }
                String fn = f.group(1) != null ? f.group(1) : f.group(2);
                if (fn.equals("parse") || methods.contains(fn)) {
                    continue;
                }
                int top = i;
                while (top > 0 && lines[top - 1].trim().startsWith("--")) {
                    top--;
                }
                assertThat(lines[top].trim()).as(name + ".lua:" + (i + 1) + " " + fn
                        + " is no method of " + header.group(1)).startsWith("-- Lua only (");
                marked++;
            }
        }
        assertThat(marked).isPositive();
    }

    private static java.util.Set<String> methodNames(Class<?> type) {
        java.util.Set<String> names = new java.util.HashSet<>();
        java.util.ArrayDeque<Class<?>> todo = new java.util.ArrayDeque<>(List.of(type));
        while (!todo.isEmpty()) {
            Class<?> c = todo.pop();
            if (c == null || c == Object.class || c == Record.class) {
                continue;
            }
            for (java.lang.reflect.Method m : c.getDeclaredMethods()) {
                names.add(m.getName());
            }
            todo.addAll(List.of(c.getDeclaredClasses()));
            todo.add(c.getSuperclass());
        }
        return names;
    }

    @Test
    void noPartCreatesGlobalsOrPassesNumbersToRedisCall() {
        // Redis forbids new globals; every top-level definition must be local (or a field of sluice/ALG).
        Pattern global = Pattern.compile("(?m)^(function [A-Za-z_]+\\(|[A-Za-z_][A-Za-z0-9_]* = )");
        for (SluiceScript.Part part : script.parts()) {
            assertThat(global.matcher(partText(part.path())).find()).as(part.path()).isFalse();
        }
    }

    @Test
    void errorLinesAreMappedBackToFiles() {
        SluiceScript.Part rule = script.parts().get(script.parts().size() - 1);
        String message = "ERR user_script:" + (rule.firstLine() + 2) + ": boom script: abc, on @user_script:"
                + (rule.firstLine() + 2) + ".";
        assertThat(script.explain(message)).contains("user_script:" + (rule.firstLine() + 2) + " (rule.lua:3)");
        assertThat(script.explain("ERR user_script:1: x")).contains("(lib/core.lua:1)");
    }

    @Test
    void everyLineOfTheFunctionsLibraryMapsBackToTheFileLineItCopies() {
        String[] library = script.functionLibrary().split("\n", -1);
        java.util.Map<String, String[]> files = new java.util.HashMap<>();
        int mapped = 0;
        for (int line = 1; line <= library.length; line++) {
            String where = script.locateInLibrary(line);
            int colon = where.lastIndexOf(".lua:");
            if (colon < 0) {
                continue;   // a line of the wrapper or of the loader that SluiceScript generates
            }
            String path = where.substring(0, colon + 4);
            int n = Integer.parseInt(where.substring(colon + 5));
            assertThat(library[line - 1]).as("library line %d, said to be %s", line, where)
                    .isEqualTo(files.computeIfAbsent(path, p -> script.part(p).split("\n", -1))[n - 1]);
            mapped++;
        }
        assertThat(mapped).as("lines of the files").isGreaterThan(library.length * 3 / 4);
        SluiceScript.Part rule = script.parts().get(script.parts().size() - 1);
        assertThat(script.explain("ERR user_function:3: x")).contains("user_function:3 (lib/core.lua:1)");
        assertThat(script.locateInLibrary(2)).isEqualTo("the library wrapper SluiceScript generates");
        assertThat(script.functionLibrary()).startsWith("#!lua name=" + script.functionName() + "\n")
                .contains("redis.register_function(\"" + script.functionName() + "\"")
                .contains("function_name = \"" + script.pingFunction() + "\"");
        assertThat(script.functionName()).matches("sluice_[0-9a-f]{40}").isNotEqualTo("sluice_" + script.sha1());
        assertThat(SluiceScript.sync().functionName()).isNotEqualTo(script.functionName());
        assertThat(rule.path()).isEqualTo("rule.lua");
        // The dispatcher's view of build()'s locals: what rule.lua uses from the top level, kept between calls.
        assertThat(script.functionLibrary()).contains("\nreturn sluice, sluice_tickets, sluice_decide_one,"
                + " sluice_batch_text, sluice_decide_batch_one, sluice_lockout\n");
        assertThat(SluiceScript.sync().functionLibrary()).contains("\nreturn sluice\n");
    }

    @Test
    void eachAlgorithmFileIsABranchOfTheLoaderAndItsLinesStillMapBack() {
        String[] lines = script.source().split("\n", -1);
        for (SluiceScript.Part part : script.parts()) {
            if (!part.path().startsWith("algorithms/")) {
                continue;
            }
            String name = part.path().substring("algorithms/".length(), part.path().length() - ".lua".length());
            // The generated line just before the file opens its branch; the file itself is unchanged.
            assertThat(lines[part.firstLine() - 2]).as(name).matches("(if|elseif) name == \"" + name + "\" then.*");
            assertThat(script.part(part.path())).isEqualTo(rawResource(part.path()));
            assertThat(script.locate(part.firstLine() + 4)).isEqualTo(part.path() + ":5");
            assertThat(script.locate(part.firstLine() - 1)).isEqualTo("the loader SluiceScript generates");
        }
        SluiceScript.Part first = script.parts().stream().filter(p -> p.path().startsWith("algorithms/")).findFirst()
                .orElseThrow();
        assertThat(lines[first.firstLine() - 5]).isEqualTo("function sluice.algorithm(name)");
        assertThat(script.source()).contains("elseif name == \"smooth_warming_up\" then sluice.algorithm(\"smooth_bursty\")");
    }

    @Test
    void aRuleUsingAnAlgorithmWithoutAScriptFailsClearly() {
        Rule rule = Rule.of("checkout", FixedWindow.of(5, Duration.ofMinutes(1)),
                TokenBucket.of(3, 1, Duration.ofSeconds(1)).named("burst"));
        if (!script.supports("token_bucket")) {
            assertThatThrownBy(() -> RedisRule.compile(rule, script)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("algorithm token_bucket has no Redis script yet")
                    .hasMessageContaining("'burst'").hasMessageContaining("'checkout'");
        }
        RedisRule ok = RedisRule.compile(Rule.of("r", FixedWindow.of(5, Duration.ofMinutes(1))), script);
        assertThat(ok.params(0)).isEqualTo("5 60000000 epoch 0");
    }

    private String partText(String path) {
        return script.part(path);
    }

    private static String rawResource(String path) {
        try (var in = SluiceScript.class.getResourceAsStream(SluiceScript.ROOT + path)) {
            String text = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            return text.endsWith("\n") ? text : text + "\n";
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
