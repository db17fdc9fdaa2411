package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class HttpStackTest {

    @Test
    void aStopDrainsConnectionsForArmeriasSecondAtMostAndNeverLongerThanTheQuietPeriod() {
        assertThat(HttpStack.armeriaDrain()).isEqualTo(Duration.ofSeconds(1));
        assertThat(HttpStack.stopDrain(Duration.ZERO)).isEqualTo(Duration.ZERO);
        assertThat(HttpStack.stopDrain(Duration.ofMillis(200))).isEqualTo(Duration.ofMillis(200));
        assertThat(HttpStack.stopDrain(Duration.ofSeconds(1))).isEqualTo(Duration.ofSeconds(1));
        // The default quiet period (1 s) and longer ones keep Armeria's drain: sluice serve stops as before.
        assertThat(HttpStack.stopDrain(Duration.ofSeconds(30))).isEqualTo(Duration.ofSeconds(1));
    }
}
