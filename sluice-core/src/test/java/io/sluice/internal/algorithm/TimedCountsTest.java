package io.sluice.internal.algorithm;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The pair-array operations of sliding_log and rolling_window: each returns a new array and leaves its argument. */
class TimedCountsTest {

    private static final long[] PAIRS = {10, 1, 20, 2, 30, 3};

    @Test
    void afterKeepsTheEntriesPastTheCutoffAndTheSameArrayWhenNoneLeaves() {
        assertThat(TimedCounts.after(PAIRS, 9)).isSameAs(PAIRS);
        assertThat(TimedCounts.after(PAIRS, 10)).containsExactly(20, 2, 30, 3);
        assertThat(TimedCounts.after(PAIRS, 29)).containsExactly(30, 3);
        assertThat(TimedCounts.after(PAIRS, 30)).isEmpty();
        assertThat(TimedCounts.after(TimedCounts.EMPTY, 0)).isEmpty();
    }

    @Test
    void addingAndAppendingCopy() {
        assertThat(TimedCounts.addedToNewest(PAIRS, 4)).containsExactly(10, 1, 20, 2, 30, 7);
        assertThat(TimedCounts.appended(PAIRS, 40, 4)).containsExactly(10, 1, 20, 2, 30, 3, 40, 4);
        assertThat(TimedCounts.appended(TimedCounts.EMPTY, 5, 1)).containsExactly(5, 1);
        assertThat(PAIRS).containsExactly(10, 1, 20, 2, 30, 3);
    }

    @Test
    void loweringAnEntryToZeroRemovesIt() {
        assertThat(TimedCounts.indexOf(PAIRS, 20)).isEqualTo(2);
        assertThat(TimedCounts.indexOf(PAIRS, 25)).isEqualTo(-1);
        assertThat(TimedCounts.lowered(PAIRS, 2, 1)).containsExactly(10, 1, 20, 1, 30, 3);
        assertThat(TimedCounts.lowered(PAIRS, 2, 2)).containsExactly(10, 1, 30, 3);
        assertThat(TimedCounts.lowered(PAIRS, 0, 1)).containsExactly(20, 2, 30, 3);
        assertThat(TimedCounts.lowered(PAIRS, 4, 3)).containsExactly(10, 1, 20, 2);
        assertThat(TimedCounts.lowered(new long[] {5, 1}, 0, 1)).isEmpty();
        assertThat(PAIRS).containsExactly(10, 1, 20, 2, 30, 3);
    }
}
