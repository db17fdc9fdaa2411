package io.sluice.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.cli.BenchRunner;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;

/**
 * The launcher finds this module's run of {@code sluice bench} the way it looks for it, through
 * {@link ServiceLoader}: a wrong name in {@code META-INF/services} would otherwise show only when someone runs
 * {@code ./sluice bench} (BenchSmokeIT drives {@link BenchRun} directly).
 */
class BenchRegistrationTest {

    @Test
    void theLauncherFindsTheBenchmarksRunner() {
        assertThat(ServiceLoader.load(BenchRunner.class).stream().map(ServiceLoader.Provider::type))
                .containsExactly(Bench.class);
    }
}
