package io.sluice.bench.attack;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.bench.BenchContext;
import io.sluice.bench.Measurement;
import io.sluice.bench.Profile;
import io.sluice.bench.Progress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The attack suite's HTTP/2 reset and Redis fault probes, run once through the suite (quick profile, selected
 * with the filter a user would pass), against real {@code sluice serve} child processes and a real
 * redis-server. It asserts what must hold, never how fast: each probe judges its own generous bounds (a
 * connection cut off before 100,000 streams; no over-admission; answers normal again within 5 s of each Redis
 * fault's end) and the row's note says {@value AttackSuite#DID_NOT_HOLD} when one failed; MadeYouReset on
 * answered streams must moreover end in GOAWAY {@code ENHANCE_YOUR_CALM} and the close within 10,000 streams.
 */
class AttackProbesIT {

    private static final String SELECTED =
            "sluice/(http2_rapid_reset|http2_made_you_reset|http2_made_you_reset_answered|redis_\\w+)$";

    /**
     * On each port, what ended a MadeYouReset connection and after how many streams, as the probe's note says it:
     * "HTTP: GOAWAY ENHANCE_YOUR_CALM and closed after 1,450 streams written ...".
     */
    private static final Pattern CALM = Pattern.compile(
            "(HTTP|gRPC): GOAWAY ENHANCE_YOUR_CALM and (?:closed|reset) after ([\\d,]+) streams written");

    /** The server's limit is 400 resets; the probe writes at most 1,000 streams ahead of the server's resets. */
    private static final int STREAMS_BEFORE_CLOSE_AT_MOST = 10_000;

    /** The pause between probes and the bystander's run alone before and after each, ms (see the run). */
    private static final long SETTLE_MS = 300;
    private static final long BYSTANDER_ALONE_MS = 500;

    @Test
    void resetFloodsAreCutOffAndRedisFaultsRecoverWithoutOverAdmission(@TempDir Path dir) throws Exception {
        List<Measurement> rows;
        try (BenchContext context = new BenchContext(Profile.QUICK, new Progress(System.out), dir,
                Pattern.compile(SELECTED))) {
            // The quick profile's pauses around each probe (1 s to settle, 2 s of bystander alone, before and
            // after) are 36 s of this run's six probes; they feed the note's bystander figures only, so shorter.
            rows = new AttackSuite(SETTLE_MS, BYSTANDER_ALONE_MS).run(context);
        }

        assertThat(rows).as("rows and their notes: %s", rows.stream().map(m -> m.variant() + ": " + m.note()).toList())
                .extracting(Measurement::variant).containsExactly("http2_rapid_reset",
                "http2_made_you_reset", "http2_made_you_reset_answered", "redis_sigstop", "redis_sigkill",
                "redis_client_pause");
        for (Measurement row : rows) {
            assertThat(row.note()).as("%s", row.variant()).doesNotContain(AttackSuite.DID_NOT_HOLD)
                    .doesNotStartWith("probe failed");
            assertThat(row.p99Us()).as("the bystander was answered during %s", row.variant()).isNotNull();
        }
        for (Measurement row : rows.subList(0, 3)) {
            // both ports were attacked (the probe's own verdict, above, says each was cut off)
            assertThat(row.note()).as("%s", row.variant()).contains("HTTP: ", "gRPC: ").doesNotContain("still open");
        }
        // MadeYouReset on answered streams, from a client that reads promptly: GOAWAY and the close on both ports,
        // well before the probe's own bound (Http2ServerResetLimit in sluice-server)
        Measurement answered = rows.get(2);
        Matcher calm = CALM.matcher(answered.note());
        List<String> ports = new ArrayList<>();
        while (calm.find()) {
            ports.add(calm.group(1));
            assertThat(Integer.parseInt(calm.group(2).replace(",", ""))).as("%s on %s: %s", answered.variant(),
                    calm.group(1), answered.note()).isLessThan(STREAMS_BEFORE_CLOSE_AT_MOST);
        }
        assertThat(ports).as("%s: %s", answered.variant(), answered.note()).containsExactly("HTTP", "gRPC");
        for (Measurement row : rows.subList(3, 6)) {
            assertThat(row.overAdmitted()).as("%s", row.variant()).isZero();
            assertThat(row.note()).as("%s", row.variant()).contains("bench normal again 200");
        }
    }
}
