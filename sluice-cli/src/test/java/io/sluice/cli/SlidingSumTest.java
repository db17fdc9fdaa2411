package io.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class SlidingSumTest {

    @Test
    void aWindowIsHalfOpenLikeTheSlidingLog() {
        SlidingSum sum = new SlidingSum(1_000);
        sum.add(0, 2);
        sum.add(999, 1);
        assertThat(sum.peak()).isEqualTo(3);
        sum.add(1_000, 1); // the permits at 0 are exactly one window old: out
        assertThat(sum.peak()).isEqualTo(3);
        sum.add(1_000, 5); // same instant: merged
        assertThat(sum.peak()).isEqualTo(7);
        assertThat(sum.isIdleAt(1_999)).isFalse();
        assertThat(sum.isIdleAt(2_000)).isTrue();
    }

    @Test
    void agreesWithBruteForceOnRandomStreams() {
        Random random = new Random(42);
        for (int round = 0; round < 200; round++) {
            long window = 1 + random.nextInt(50);
            SlidingSum sum = new SlidingSum(window);
            List<long[]> events = new ArrayList<>();
            long t = 0;
            for (int i = 0; i < 100; i++) {
                t += random.nextInt(10);
                long n = 1 + random.nextInt(5);
                events.add(new long[] {t, n});
                sum.add(t, n);
            }
            assertThat(sum.peak()).isEqualTo(bruteForcePeak(events, window));
        }
    }

    /** The largest sum over (end − window, end] for every event time as the end. */
    private static long bruteForcePeak(List<long[]> events, long window) {
        long peak = 0;
        for (long[] end : events) {
            long s = 0;
            for (long[] e : events) {
                if (e[0] > end[0] - window && e[0] <= end[0]) {
                    s += e[1];
                }
            }
            peak = Math.max(peak, s);
        }
        return peak;
    }
}
