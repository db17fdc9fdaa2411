package io.sluice.internal.memory;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.internal.algorithm.StateCell;
import org.junit.jupiter.api.Test;

/**
 * The cell's version word as the sequence lock and the hint read it: odd while a write is under way (so an
 * optimistic read that overlaps one never validates), a new even value after each write, the hint carried by the
 * write that sets it, and odd for good once retired. One thread, so each step is exact.
 */
class CellTest {

    @Test
    void anOptimisticReadOverlappingAnInPlaceWriteDoesNotValidate() {
        Cell cell = new Cell();
        int before = cell.versionBeforeRead();
        assertThat(before & 1).isZero();
        synchronized (cell) {
            int v = cell.beginWrite();
            assertThat(v).isEqualTo(before);
            assertThat(cell.versionBeforeRead() & 1).as("odd while the write is under way").isOne();
            assertThat(cell.unchangedSince(before)).isFalse();
            cell.endWrite(v, false);
        }
        int after = cell.versionBeforeRead();
        assertThat(after & 1).isZero();
        assertThat(after).isNotEqualTo(before);
        assertThat(cell.unchangedSince(before)).as("a read that spanned the whole write").isFalse();
        assertThat(cell.unchangedSince(after)).isTrue();
    }

    @Test
    void theHintIsWhatTheLastWriteSaidAndEveryWriteMovesTheVersion() {
        Cell cell = new Cell();
        StateCell state = new StateCell();
        int seen = cell.versionHeld();
        synchronized (cell) {
            cell.endWrite(cell.beginWrite(), true);
            assertThat(cell.versionHeld() & Cell.READ_FIRST).isNotZero();
            assertThat(cell.versionHeld()).isNotEqualTo(seen);
            seen = cell.versionHeld();
            cell.publish(state, true);
            assertThat(cell.versionHeld() & Cell.READ_FIRST).isNotZero();
            assertThat(cell.versionHeld()).as("a write that keeps the hint still moves the version")
                    .isNotEqualTo(seen);
            cell.publish(state, false);
            assertThat(cell.versionHeld() & Cell.READ_FIRST).isZero();
            assertThat(cell.retired()).isFalse();
        }
    }

    @Test
    void aRetiredCellStaysOddSoNoReadValidatesAndNoWriterUsesIt() {
        Cell cell = new Cell();
        synchronized (cell) {
            cell.endWrite(cell.beginWrite(), true);
            cell.retire();
            assertThat(cell.retired()).isTrue();
        }
        assertThat(cell.versionBeforeRead() & 1).isOne();
    }
}
