package io.sluice.rules;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class MillisTest {

    @Test
    void upToThreeDecimalsWithoutTrailingZeros() {
        assertThat(Millis.format(0)).isEqualTo("0");
        assertThat(Millis.format(1)).isEqualTo("0.001");
        assertThat(Millis.format(10)).isEqualTo("0.01");
        assertThat(Millis.format(120)).isEqualTo("0.12");
        assertThat(Millis.format(1_500)).isEqualTo("1.5");
        assertThat(Millis.format(6_000_001)).isEqualTo("6000.001");
        assertThat(Millis.format(1_767_225_600_000_250L)).isEqualTo("1767225600000.25");
        assertThat(Millis.format(Long.MAX_VALUE)).isEqualTo("9223372036854775.807");
    }

    @Test
    void parsesExactly() {
        assertThat(Millis.parseMicros("1767225600000.25", Long.MAX_VALUE)).isEqualTo(1_767_225_600_000_250L);
        assertThat(Millis.parseMicros("1.500", Long.MAX_VALUE)).isEqualTo(1_500);
        assertThat(Millis.parseMicros("1e3", Long.MAX_VALUE)).isEqualTo(1_000_000);
        assertThat(Millis.parseMicros("0.001", Long.MAX_VALUE)).isEqualTo(1);
        for (long micros : new long[] {0, 1, 999, 1_000, 123_456_789, 9_007_199_254_740_992L}) {
            assertThat(Millis.parseMicros(Millis.format(micros), Long.MAX_VALUE)).isEqualTo(micros);
        }
    }

    @Test
    void refusesWhatIsNotWholeMicrosecondsOrOutOfRange() {
        assertThatThrownBy(() -> Millis.parseMicros("0.0005", Long.MAX_VALUE)).hasMessageContaining("at most 3 decimals");
        assertThatThrownBy(() -> Millis.parseMicros("-1", Long.MAX_VALUE)).hasMessageContaining("in [0,");
        assertThatThrownBy(() -> Millis.parseMicros("2", 1_000)).hasMessage("expected milliseconds in [0, 1]; was 2");
    }
}
