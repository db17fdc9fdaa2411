package io.sluice.bench.attack;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.bench.BenchContext;
import io.sluice.bench.Measurement;
import io.sluice.bench.Profile;
import io.sluice.bench.Progress;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The attack suite's HTTP/2 reset and Redis fault probes, run once through the suite (quick profile, selected
 * with the filter a user would pass), against real {@code sluice serve} child processes and a real
 * redis-server. It asserts what must hold, never how fast: each probe judges its own generous bounds (a
 * connection cut off before 100,000 streams; no over-admission; answers normal again within 5 s of each Redis
 * fault's end) and the row's note says {@value AttackSuite#DID_NOT_HOLD} when one failed.
 */
class AttackProbesIT {

    /**
     * The new probes, but for {@code http2_made_you_reset_answered}: the server does not cut that connection off
     * (docs/attack-suite.md, an open finding), and a test must not pin a defect.
     */
    private static final String SELECTED = "sluice/(http2_rapid_reset|http2_made_you_reset|redis_\\w+)$";

    @Test
    void resetFloodsAreCutOffAndRedisFaultsRecoverWithoutOverAdmission(@TempDir Path dir) throws Exception {
        List<Measurement> rows;
        try (BenchContext context = new BenchContext(Profile.QUICK, new Progress(System.out), dir,
                Pattern.compile(SELECTED))) {
            rows = new AttackSuite().run(context);
        }

        assertThat(rows).as("rows and their notes: %s", rows.stream().map(m -> m.variant() + ": " + m.note()).toList())
                .extracting(Measurement::variant).containsExactly("http2_rapid_reset",
                "http2_made_you_reset", "redis_sigstop", "redis_sigkill", "redis_client_pause");
        for (Measurement row : rows) {
            assertThat(row.note()).as("%s", row.variant()).doesNotContain(AttackSuite.DID_NOT_HOLD)
                    .doesNotStartWith("probe failed");
            assertThat(row.p99Us()).as("the bystander was answered during %s", row.variant()).isNotNull();
        }
        for (Measurement row : rows.subList(0, 2)) {
            // both ports were attacked (the probe's own verdict, above, says each was cut off)
            assertThat(row.note()).as("%s", row.variant()).contains("HTTP: ", "gRPC: ").doesNotContain("still open");
        }
        for (Measurement row : rows.subList(2, 5)) {
            assertThat(row.overAdmitted()).as("%s", row.variant()).isZero();
            assertThat(row.note()).as("%s", row.variant()).contains("bench normal again 200");
        }
    }
}
