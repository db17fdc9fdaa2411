package io.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class DemoTest {

    private static String run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        assertThat(code).as(err.toString(StandardCharsets.UTF_8)).isZero();
        return out.toString(StandardCharsets.UTF_8);
    }

    @Test
    void demoIsTheDefaultCommandAndShowsEveryAlgorithm() {
        String out = run();
        for (String algorithm : new String[] {"fixed_window", "sliding_log", "sliding_window", "rolling_window",
                "token_bucket", "gcra", "leaky_bucket", "smooth_bursty", "smooth_warming_up", "refresh_period",
                "concurrency"}) {
            assertThat(out).contains(algorithm);
        }
    }

    @Test
    void fixedWindowRowShowsTheBoundaryBurst() {
        String row = run("demo").lines().filter(l -> l.startsWith("fixed_window")).findFirst().orElseThrow();
        // 10 of the 12-request burst at 0.5 s pass; the next window opens at 1.0 s and admits 10 more.
        assertThat(row).contains("++++++++++..  ....++++++++++++++");
        assertThat(row).endsWith(" 24");
    }

    @Test
    void slidingLogNeverAdmitsMoreThanTenInAnySecond() {
        String row = run("demo").lines().filter(l -> l.startsWith("sliding_log")).findFirst().orElseThrow();
        assertThat(row).contains("++++++++++..  .........+++++++++");
        assertThat(row).endsWith(" 19");
    }

    @Test
    void unknownCommandFails() {
        assertThat(Main.run(new String[] {"nope"}, new PrintStream(new ByteArrayOutputStream()),
                new PrintStream(new ByteArrayOutputStream()))).isEqualTo(2);
    }
}
