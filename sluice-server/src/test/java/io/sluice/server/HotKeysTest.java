package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.testkit.ManualClock;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class HotKeysTest {

    /** Aligned to a slot boundary, so that "the next slot" is an exact number of seconds away. */
    private final ManualClock clock = new ManualClock(1_767_225_600_000_000L);

    @Test
    void memoryStaysBoundedWhateverTheNumberOfDistinctKeys() {
        HotKeys hot = new HotKeys(clock, 64);
        long bound = 2L * HotKeys.SLOTS * 64;
        // Two minutes of one new key per decision, a third of them rejected, and one hammered key among them.
        for (int i = 0; i < 240_000; i++) {
            hot.record("api", "user:" + i, i % 3 == 0);
            if (i % 10 == 0) {
                hot.record("api", "hammer", true);
            }
            if (i % 2_000 == 0) {
                clock.advance(Duration.ofSeconds(1));
            }
            if (i % 1_000 == 0) {
                assertThat(hot.counters()).isLessThanOrEqualTo((int) bound);
            }
        }
        assertThat(hot.counters()).isEqualTo((int) bound);
        HotKeys.Report r = hot.report(3);
        assertThat(r.hottest()).hasSize(3);
        assertThat(r.hottest().get(0).key()).isEqualTo("hammer");
        assertThat(r.mostRejected().get(0).key()).isEqualTo("hammer");
    }

    @Test
    void countsAreExactWhileKeysAreFewAndSpanTheSlotsOfTheMinute() {
        HotKeys hot = new HotKeys(clock, 16);
        for (int second = 0; second < 60; second++) {
            hot.record("api", "a", false);
            hot.record("api", "a", second % 2 == 0);
            hot.record("login", "b", true);
            clock.advance(Duration.ofSeconds(1));
        }
        clock.advance(Duration.ofMillis(-1));
        HotKeys.Report r = hot.report(10);
        assertThat(r.decisions()).isEqualTo(180);
        assertThat(r.rejections()).isEqualTo(90);
        assertThat(r.hottest()).containsExactly(new HotKeys.Entry("api", "a", 120, 0),
                new HotKeys.Entry("login", "b", 60, 0));
        assertThat(r.mostRejected()).containsExactly(new HotKeys.Entry("login", "b", 60, 0),
                new HotKeys.Entry("api", "a", 30, 0));
    }

    @Test
    void aSlotOlderThanTheMinuteLeavesTheReport() {
        HotKeys hot = new HotKeys(clock, 16);
        hot.record("api", "old", true);
        clock.advance(Duration.ofSeconds(HotKeys.SLOT_SECONDS));
        hot.record("api", "newer", false);
        clock.advance(Duration.ofSeconds(HotKeys.SLOTS * HotKeys.SLOT_SECONDS - HotKeys.SLOT_SECONDS));
        // The slot of "old" is now a minute ago: out; the slot of "newer" is the oldest still in.
        HotKeys.Report r = hot.report(10);
        assertThat(r.hottest()).extracting(HotKeys.Entry::key).containsExactly("newer");
        assertThat(r.mostRejected()).isEmpty();
        clock.advance(Duration.ofSeconds(HotKeys.SLOT_SECONDS));
        assertThat(hot.report(10).hottest()).isEmpty();
        // Writing into a slot whose time came round again starts it afresh.
        hot.record("api", "again", false);
        assertThat(hot.report(10).hottest()).containsExactly(new HotKeys.Entry("api", "again", 1, 0));
    }

    @Test
    void aKeyMissingFromAFullSlotIsCountedAtThatSlotsMinimumWithThatMuchError() {
        HotKeys hot = new HotKeys(clock, 2);
        hot.record("r", "x", false);
        hot.record("r", "x", false);
        clock.advance(Duration.ofSeconds(HotKeys.SLOT_SECONDS));
        // Second slot: y and z fill both counters (its minimum is then 1), so x, absent from it, may have been
        // seen there once: counted 2 + 1 with an error of 1. The first slot has a free counter: z, absent from
        // it, was not seen there.
        hot.record("r", "y", false);
        hot.record("r", "z", false);
        hot.record("r", "z", false);
        hot.record("r", "z", false);
        HotKeys.Report r = hot.report(10);
        assertThat(r.hottest()).containsExactly(new HotKeys.Entry("r", "z", 3, 0),
                new HotKeys.Entry("r", "x", 2 + 1, 1), new HotKeys.Entry("r", "y", 1, 0));
        assertThat(r.decisions()).isEqualTo(6);
    }
}
