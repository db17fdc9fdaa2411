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
        assertThat(paths.get(0)).isEqualTo("prelude.lua");
        assertThat(paths.get(paths.size() - 1)).isEqualTo("rule.lua");
        assertThat(paths.get(paths.size() - 2)).as("a rule's lockout, before the dispatcher").isEqualTo("lockout.lua");
        List<String> algorithms = paths.subList(1, paths.size() - 2);
        assertThat(algorithms).contains("algorithms/fixed_window.lua");
        // The algorithm files follow SluiceScript.ALGORITHMS, which is AlgorithmName's list: every one is ported.
        List<String> expected = AlgorithmName.names().stream().map(n -> "algorithms/" + n + ".lua").toList();
        assertThat(algorithms).isEqualTo(expected);
        assertThat(script.algorithms()).containsExactlyInAnyOrderElementsOf(AlgorithmName.names());
        assertThat(script.source()).startsWith("-- prelude.lua");
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
        // The prelude defines some helpers at the top level and the others in the __index function of sluice's
        // metatable, one branch per group, entered when a call first reads one of the names its condition lists.
        // A helper defined in a branch whose condition does not name it would read as nil until another name of
        // its group had been read: every such definition must be named in its own branch's condition.
        String prelude = partText("prelude.lua");
        int lazyStart = prelude.indexOf("setmetatable(sluice, { __index = function(helpers, name)");
        assertThat(lazyStart).as("the prelude builds some helpers on first use").isPositive();
        java.util.Set<String> defined = new java.util.HashSet<>();
        java.util.regex.Matcher eager = Pattern.compile("(?m)^function sluice\\.([a-z_0-9]+)\\(")
                .matcher(prelude.substring(0, lazyStart));
        while (eager.find()) {
            defined.add(eager.group(1));
        }
        defined.add("FOREVER");
        defined.add("algorithm");   // the loader SluiceScript generates
        String lazy = prelude.substring(lazyStart);
        String[] branches = lazy.split("(?m)^  (?:if|elseif) ");
        int groups = 0;
        for (int b = 1; b < branches.length; b++) {
            String branch = branches[b];
            String condition = branch.substring(0, branch.indexOf(" then"));
            java.util.regex.Matcher def = Pattern.compile("(?m)^    function sluice\\.([a-z_0-9]+)\\(").matcher(branch);
            while (def.find()) {
                assertThat(condition).as("the branch defining sluice." + def.group(1))
                        .contains("name == \"" + def.group(1) + "\"");
                defined.add(def.group(1));
            }
            groups++;
        }
        assertThat(groups).isGreaterThanOrEqualTo(2);
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
        assertThat(script.explain("ERR user_script:1: x")).contains("(prelude.lua:1)");
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
            assertThat(script.locate(part.firstLine() - 1)).isEqualTo("the algorithm loader SluiceScript generates");
        }
        assertThat(lines[script.parts().get(1).firstLine() - 5]).isEqualTo("function sluice.algorithm(name)");
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
