package io.sluice.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Concurrency;
import io.sluice.FixedWindow;
import io.sluice.Gcra;
import io.sluice.LeakyBucket;
import io.sluice.RefreshPeriod;
import io.sluice.RollingWindow;
import io.sluice.SlidingLog;
import io.sluice.SlidingWindow;
import io.sluice.SmoothBursty;
import io.sluice.SmoothWarmingUp;
import io.sluice.TokenBucket;
import java.time.Duration;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;

/** The parameter words of every limit record: the layout each Lua port's parse reads. */
class LimitParamsTest {

    @Test
    void fixedWindow() {
        assertThat(LimitParams.encode(FixedWindow.of(3, Duration.ofSeconds(1)).named("x")))
                .isEqualTo("3 1000000 epoch 0");
        assertThat(LimitParams.encode(FixedWindow.of(3, Duration.ofMillis(1500))
                .withAlign(FixedWindow.Align.FIRST_REQUEST).withCountRejected(true)))
                .isEqualTo("3 1500000 first_request 1");
    }

    @Test
    void everyLimitRecordEncodes() {
        assertThat(LimitParams.encode(SlidingLog.of(30, Duration.ofMinutes(1)))).startsWith("30 60000000 ");
        assertThat(LimitParams.encode(SlidingWindow.of(10, Duration.ofSeconds(1)))).isEqualTo("10 1000000");
        assertThat(LimitParams.encode(RollingWindow.of(10, Duration.ofSeconds(1), Duration.ofMillis(100))))
                .isEqualTo("10 1000000 100000");
        assertThat(LimitParams.encode(TokenBucket.of(10, 5, Duration.ofSeconds(1)))).isEqualTo("10 5 1000000 greedy 10");
        assertThat(LimitParams.encode(Gcra.of(10, Duration.ofSeconds(1)))).startsWith("10 1000000 ");
        assertThat(LimitParams.encode(LeakyBucket.of(1, Duration.ofSeconds(1)).withBurst(5))).startsWith("1 1000000 5 ");
        assertThat(LimitParams.encode(SmoothBursty.of(5.0))).startsWith("5 ");
        assertThat(LimitParams.encode(SmoothWarmingUp.of(2.0, Duration.ofSeconds(4)))).startsWith("2 4000000 ");
        assertThat(LimitParams.encode(RefreshPeriod.of(2, Duration.ofSeconds(1)))).startsWith("2 1000000 ");
        assertThat(LimitParams.encode(Concurrency.of(2, Duration.ofSeconds(10)))).isEqualTo("2 10000000");
    }

    @Test
    void doublesCarryCsSeventeenDigits() {
        assertThat(LimitParams.exactDouble(0.1)).isEqualTo("0.10000000000000001");
        assertThat(LimitParams.exactDouble(5.0)).isEqualTo("5");
        assertThat(LimitParams.exactDouble(1.0 / 3)).isEqualTo("0.33333333333333331");
    }

    @Test
    void theFingerprintIsTheFirst36BitsOfSha256InBase64Url() {
        // sha256("fixed_window 3 1000000 epoch 0") starts b0 2a 77 3f f...: 101100 000010 101001 110111 001111 111111
        assertThat(LimitParams.fingerprint("fixed_window", "3 1000000 epoch 0")).isEqualTo("sCp3P_");
        assertThat(LimitParams.fingerprint("fixed_window", "3 60000000 epoch 0")).isEqualTo("B9q1yY");
        assertThat(LimitParams.fingerprint("fixed_window", "10 1000000 epoch 0")).hasSize(6)
                .matches("[A-Za-z0-9_-]{6}").isNotEqualTo("sCp3P_");
        assertThat(LimitParams.fingerprint("token_bucket", "3 1000000 epoch 0")).isNotEqualTo("sCp3P_");
    }

    @Property(tries = 2000)
    void doublesReadBackBitForBit(@ForAll double d) {
        if (Double.isFinite(d) && d != 0) {
            assertThat(Double.parseDouble(LimitParams.exactDouble(d))).isEqualTo(d);
            assertThat(LimitParams.exactDouble(d)).doesNotContain(" ");
        }
    }
}
