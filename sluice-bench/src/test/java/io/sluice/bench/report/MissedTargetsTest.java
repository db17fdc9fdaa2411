package io.sluice.bench.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class MissedTargetsTest {

    private final MissedTargets reasons = MissedTargets.parse("""
            Lines before the first heading are a comment.

            ### Redis, hot key
            Why the hot key
            misses.

            ### Memory
            Why memory misses.
            """);

    @Test
    void explainsOnlyTargetsThisRunMissed() {
        List<Targets.Check> checks = List.of(
                new Targets.Check("Redis, hot key, 64 in flight: gcra ≥ 0.9× bare Lua", "0.7×", false),
                new Targets.Check("Memory: ≤ 100 bytes per key", "90", true),
                new Targets.Check("Local, 1 thread", "—", null));
        assertThat(reasons.explain(checks)).containsExactly(Map.entry("Redis, hot key", "Why the hot key misses."));
    }

    @Test
    void aMetTargetDropsItsExplanation() {
        assertThat(reasons.explain(List.of(new Targets.Check("Redis, hot key, async", "1×", true)))).isEmpty();
    }

    @Test
    void theShippedExplanationsParse() {
        List<Targets.Check> missedEverywhere = List.of(
                new Targets.Check("Redis, hot key, 64 in flight: Sluice token_bucket ≥ 0.9× bare Lua", "", false),
                new Targets.Check("Memory: ≤ 100 bytes per key (MEMORY USAGE) for Sluice's O(1) algorithms", "", false));
        assertThat(MissedTargets.shipped().explain(missedEverywhere)).hasSize(2)
                .allSatisfy(e -> assertThat(e.getValue()).isNotBlank().doesNotContain("\n"));
    }
}
