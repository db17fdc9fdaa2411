package io.sluice.bench.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.bench.Profile;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The lengths of the server suite's phases per profile, and when a warm-up takes another step. */
class ServerPhasesTest {

    /** BenchSmokeIT's profile: a Redis warm-up of 40 ms, so a server warm-up budget of 2 s. */
    private static final Profile TINY = new Profile("smoke-test", 0, 1, 100, 2, 100, List.of(1),
            List.of("token_bucket"), List.of(1), List.of("bucket4j"), 50, List.of(4), List.of("token_bucket"),
            List.of("token_bucket/leased"), List.of("bare-lua"), 40, 2, 150, 2_000, 50, 0, 1_000);

    @Test
    void theFloodsPhasesAreFiveRunsAtMostAWarmUpBudget() {
        assertThat(EvictionFlood.floodSeconds(Profile.FULL)).isEqualTo(10);
        assertThat(EvictionFlood.floodSeconds(Profile.QUICK)).isEqualTo(5);
        assertThat(ServerSuite.serverWarmupSeconds(TINY)).isEqualTo(2);
        assertThat(EvictionFlood.floodSeconds(TINY)).isEqualTo(2);
    }

    @Test
    void aWarmUpStepsWithinItsBudgetUntilSettled() {
        assertThat(ServerSuite.warmingUp(0, 3, 12, false, 0)).isTrue();
        assertThat(ServerSuite.warmingUp(6, 3, 12, false, 900)).isTrue();
        assertThat(ServerSuite.warmingUp(6, 3, 12, true, 900)).isFalse();
        assertThat(ServerSuite.warmingUp(12, 3, 12, false, 900)).isFalse();
    }

    @Test
    void aWarmUpGoesPastItsBudgetOnlyWhileAStepCompletesNothing() {
        // settled by the rule (0 within 5% of 0) or not: a step of no decision is no warm path
        assertThat(ServerSuite.warmingUp(2, 2, 2, true, 0)).isTrue();
        assertThat(ServerSuite.warmingUp(2, 2, 2, false, 0)).isTrue();
        assertThat(ServerSuite.warmingUp(4, 2, 2, false, 12)).isFalse();
        assertThat(ServerSuite.warmingUp(ServerSuite.COLD_LIMIT_SECONDS, 2, 2, false, 0)).isFalse();
        assertThat(ServerSuite.warmingUp(ServerSuite.COLD_LIMIT_SECONDS - 2, 2, 2, false, 0)).isTrue();
    }
}
