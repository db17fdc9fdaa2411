package io.sluice.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class BenchOptionsTest {

    @Test
    void defaultsAreTheFullRunOfEverySuiteIntoTheWorkingDirectory() {
        BenchOptions o = BenchOptions.parse(List.of());
        assertThat(o.quick()).isFalse();
        assertThat(o.suites()).containsExactly("local", "redis", "redis-attack", "memory", "server", "replay");
        assertThat(o.out()).isEqualTo(Path.of("bench-results.json"));
        assertThat(o.docs()).isEqualTo(Path.of("docs"));
        assertThat(o.filter()).isNull();
    }

    @Test
    void optionsTakeTheirValueAfterASpaceOrAnEqualsSign() {
        BenchOptions o = BenchOptions.parse(List.of("--quick", "--suites=memory,local", "--out", "r.json",
                "--no-docs", "--filter", "sluice/gcra|bucket4j"));
        assertThat(o.quick()).isTrue();
        assertThat(o.suites()).as("always in running order").containsExactly("local", "memory");
        assertThat(o.out()).isEqualTo(Path.of("r.json"));
        assertThat(o.docs()).isNull();
        assertThat(o.filter().matcher("bucket4j/token_bucket").find()).isTrue();
    }

    @Test
    void theAttackSuiteRunsOnlyWhenNamedAndLast() {
        assertThat(BenchOptions.parse(List.of()).suites()).doesNotContain("attack");
        assertThat(BenchOptions.parse(List.of("--suites", "attack,server")).suites())
                .containsExactly("server", "attack");
    }

    @Test
    void mistakesAreNamed() {
        assertThatThrownBy(() -> BenchOptions.parse(List.of("--suites", "local,disk")))
                .hasMessageContaining("unknown suite 'disk'");
        assertThatThrownBy(() -> BenchOptions.parse(List.of("--out"))).hasMessageContaining("--out needs a value");
        assertThatThrownBy(() -> BenchOptions.parse(List.of("--fast"))).hasMessageContaining("unknown option --fast");
        assertThatThrownBy(() -> BenchOptions.parse(List.of("--filter", "(")))
                .hasMessageContaining("not a regular expression");
    }
}
