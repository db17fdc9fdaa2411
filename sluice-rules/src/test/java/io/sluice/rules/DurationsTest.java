package io.sluice.rules;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class DurationsTest {

    @Test
    void everyUnit() {
        assertThat(Durations.parse("7us")).isEqualTo(Duration.ofNanos(7_000));
        assertThat(Durations.parse("250ms")).isEqualTo(Duration.ofMillis(250));
        assertThat(Durations.parse("30s")).isEqualTo(Duration.ofSeconds(30));
        assertThat(Durations.parse("5m")).isEqualTo(Duration.ofMinutes(5));
        assertThat(Durations.parse("2h")).isEqualTo(Duration.ofHours(2));
        assertThat(Durations.parse("366d")).isEqualTo(Duration.ofDays(366));
        assertThat(Durations.parse("0s")).isEqualTo(Duration.ZERO);
    }

    @Test
    void fractionsThatComeOutAsWholeMicroseconds() {
        assertThat(Durations.parse("0.5s")).isEqualTo(Duration.ofMillis(500));
        assertThat(Durations.parse("1.5ms")).isEqualTo(Duration.ofNanos(1_500_000));
        assertThat(Durations.parse("0.000001s")).isEqualTo(Duration.ofNanos(1_000));
        assertThat(Durations.parse("1.25m")).isEqualTo(Duration.ofSeconds(75));
        assertThat(Durations.parse("2.000us")).isEqualTo(Duration.ofNanos(2_000));
    }

    @Test
    void refusesWhatIsNotWholeMicroseconds() {
        assertThatThrownBy(() -> Durations.parse("0.5us")).hasMessage(
                "expected a whole number of microseconds; \"0.5us\" is 0.5us");
        assertThatThrownBy(() -> Durations.parse("0.0000001s")).hasMessage(
                "expected a whole number of microseconds; \"0.0000001s\" is 0.1us");
    }

    @Test
    void refusesOtherForms() {
        for (String bad : new String[] {"10", "1 s", "-1s", "1S", "1.s", ".5s", "1e3ms", "1sec", "1µs", "", "s"}) {
            assertThatThrownBy(() -> Durations.parse(bad)).as(bad)
                    .hasMessage("expected " + Durations.EXPECTED + "; was \"" + bad + "\"");
        }
        assertThatThrownBy(() -> Durations.parse("99999999999999999d")).hasMessageContaining("at most 366d");
    }

    @Test
    void formatsWithTheLargestExactUnit() {
        assertThat(Durations.format(Duration.ZERO)).isEqualTo("0s");
        assertThat(Durations.format(Duration.ofSeconds(90))).isEqualTo("90s");
        assertThat(Durations.format(Duration.ofMinutes(2))).isEqualTo("2m");
        assertThat(Durations.format(Duration.ofDays(1))).isEqualTo("1d");
        assertThat(Durations.format(Duration.ofMillis(1500))).isEqualTo("1500ms");
        assertThat(Durations.format(Duration.ofNanos(1_500_000))).isEqualTo("1500us");
        for (String text : new String[] {"1us", "999us", "1ms", "59s", "61m", "25h", "366d"}) {
            assertThat(Durations.format(Durations.parse(text))).isEqualTo(text);
        }
        assertThatThrownBy(() -> Durations.format(Duration.ofNanos(1))).isInstanceOf(IllegalArgumentException.class);
    }
}
