package io.sluice.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.SharedRedis;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The script builds an algorithm's module only when a call asks for it: what keeps a decision from paying for
 * the closures of eleven modules it does not use.
 */
@ExtendWith(SharedRedis.class)
class ScriptLoaderIT {

    private final SluiceScript script = SluiceScript.get();

    /** Runs everything of the script before rule.lua, then body. */
    private List<?> eval(String body) {
        SluiceScript.Part rule = script.parts().get(script.parts().size() - 1);
        String[] lines = script.source().split("\n", -1);
        String beforeRule = String.join("\n", java.util.Arrays.copyOfRange(lines, 0, rule.firstLine() - 1));
        return (List<?>) RedisServer.shared().call("EVAL", beforeRule + "\n" + body, "0");
    }

    @Test
    void aCallBuildsOnlyTheModulesItAsksFor() {
        List<?> out = eval("""
                local out = {}
                for _, name in ipairs({ "fixed_window", "token_bucket", "gcra", "smooth_bursty" }) do
                  out[#out + 1] = name .. "=" .. tostring(rawget(ALG, name) ~= nil)
                end
                local gcra = sluice.algorithm("gcra")
                out[#out + 1] = "gcra built: " .. tostring(gcra ~= nil and ALG["gcra"] == gcra)
                out[#out + 1] = "same module again: " .. tostring(sluice.algorithm("gcra") == gcra)
                out[#out + 1] = "token_bucket still unbuilt: " .. tostring(rawget(ALG, "token_bucket") == nil)
                sluice.algorithm("smooth_warming_up")
                out[#out + 1] = "smooth_bursty built for smooth_warming_up: " .. tostring(ALG["smooth_bursty"] ~= nil)
                out[#out + 1] = "unknown: " .. tostring(sluice.algorithm("no_such_algorithm"))
                return out
                """);
        assertThat(List.<Object>copyOf(out)).containsExactly("fixed_window=false", "token_bucket=false", "gcra=false",
                "smooth_bursty=false", "gcra built: true", "same module again: true", "token_bucket still unbuilt: true",
                "smooth_bursty built for smooth_warming_up: true", "unknown: nil");
    }

    @Test
    void everyPortedModuleBuildsAndRegistersItsName() {
        StringBuilder body = new StringBuilder("local out = {}\n");
        for (String name : script.algorithms()) {
            body.append("out[#out + 1] = tostring(type(sluice.algorithm(\"").append(name).append("\").step))\n");
        }
        body.append("return out\n");
        assertThat(List.<Object>copyOf(eval(body.toString()))).hasSize(script.algorithms().size()).allMatch("function"::equals);
    }
}
