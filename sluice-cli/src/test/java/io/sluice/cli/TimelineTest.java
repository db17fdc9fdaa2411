package io.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class TimelineTest {

    private static final long T0 = 1_767_225_600_000_000L;

    @Test
    void eachWidthOfTheLadderDividesTheNext() {
        for (int i = 1; i < Timeline.LADDER.length; i++) {
            assertThat(Timeline.LADDER[i] % Timeline.LADDER[i - 1]).as("rung " + i).isZero();
        }
    }

    @Test
    void mergesToTheFinestWidthThatFits() throws Exception {
        Timeline timeline = Timeline.adaptive();
        // One request a millisecond for ten seconds, every third rejected, waits growing.
        for (long ms = 0; ms < 10_000; ms++) {
            timeline.record(T0 + ms * 1_000, ms % 3 != 0, ms);
        }

        Timeline.Slices s = timeline.slices(200);

        assertThat(s.width()).isEqualTo(100_000); // 100 slices of 100 ms; 20 ms would make 500
        assertThat(s.firstStart()).isEqualTo(T0);
        assertThat(s.count()).isEqualTo(100);
        assertThat(Arrays.stream(s.admitted()).sum() + Arrays.stream(s.rejected()).sum()).isEqualTo(10_000);
        assertThat(s.admitted()[0] + s.rejected()[0]).isEqualTo(100);
        assertThat(s.rejected()[0]).isEqualTo(34); // ms 0, 3, ..., 99
        assertThat(s.longestWait()[99]).isEqualTo(9_999);
        assertThat(timeline.anyWait()).isTrue();
    }

    @Test
    void slicesAreAlignedToTheEpoch() throws Exception {
        Timeline timeline = Timeline.adaptive();
        timeline.record(T0 + 1_234_567, true, 0);
        timeline.record(T0 + 61_000_000, false, 0);

        Timeline.Slices s = timeline.slices(200);

        assertThat(s.width()).isEqualTo(1_000_000);
        assertThat(s.firstStart()).isEqualTo(T0 + 1_000_000);
        assertThat(s.count()).isEqualTo(61);
        assertThat(s.admitted()[0]).isEqualTo(1);
        assertThat(s.rejected()[60]).isEqualTo(1);
        assertThat(timeline.anyWait()).isFalse();
    }

    @Test
    void aFixedWidthIsKeptAndBounded() throws Exception {
        Timeline timeline = Timeline.fixed(250_000);
        timeline.record(T0, true, 0);
        timeline.record(T0 + 999_999, true, 0);
        assertThat(timeline.slices(2).count()).isEqualTo(4);
        assertThatThrownBy(() -> timeline.record(T0 + 250_000L * Timeline.MAX_FIXED_SLICES, true, 0))
                .isInstanceOf(UsageException.class).hasMessageContaining("choose a wider slice");
    }

    @Test
    void nothingRecorded() {
        assertThat(Timeline.adaptive().slices(200).count()).isZero();
    }
}
