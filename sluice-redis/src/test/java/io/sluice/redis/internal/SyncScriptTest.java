package io.sluice.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The second script, for synced mode: the decision script's libraries and algorithms, then sync.lua. */
class SyncScriptTest {

    private final SluiceScript sync = SluiceScript.sync();
    private final SluiceScript decide = SluiceScript.get();

    @Test
    void sharesEveryPartButTheLastWithTheDecisionScript() {
        List<SluiceScript.Part> parts = sync.parts();
        assertThat(parts.get(parts.size() - 1).path()).isEqualTo("sync.lua");
        assertThat(parts.subList(0, parts.size() - 1)).isEqualTo(decide.parts().subList(0, decide.parts().size() - 1));
        assertThat(sync.algorithms()).isEqualTo(decide.algorithms());
        assertThat(sync.sha1()).matches("[0-9a-f]{40}").isNotEqualTo(decide.sha1())
                .isEqualTo(SluiceScript.assemble("sync.lua").sha1());
    }

    @Test
    void errorsNameSyncLua() {
        SluiceScript.Part last = sync.parts().get(sync.parts().size() - 1);
        assertThat(sync.explain("ERR user_script:" + (last.firstLine() + 4) + ": boom"))
                .contains("(sync.lua:5)");
    }

    @Test
    void createsNoGlobalsAndOnlyTheWindowCountersAbsorb() {
        Pattern global = Pattern.compile("(?m)^(function [A-Za-z_]+\\(|[A-Za-z_][A-Za-z0-9_]* = )");
        assertThat(global.matcher(sync.part("sync.lua")).find()).isFalse();
        for (String name : sync.algorithms()) {
            boolean absorbs = sync.part("algorithms/" + name + ".lua").contains("function M.absorb(");
            assertThat(absorbs).as(name).isEqualTo(io.sluice.Mode.SYNCABLE.contains(name));
        }
    }
}
