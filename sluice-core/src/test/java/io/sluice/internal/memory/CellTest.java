package io.sluice.internal.memory;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The cell's version word as the sequence lock, the writers' lock and the hint read it: odd while a write is under
 * way (so an optimistic read that overlaps one never validates, and no second writer takes it), a new even value
 * after each write, the hint carried by the write that sets it, and odd (and negative) for good once retired. One
 * thread, so each step is exact.
 */
class CellTest {

    @Test
    void anOptimisticReadOverlappingAnInPlaceWriteDoesNotValidate() {
        Cell cell = new Cell();
        int before = cell.versionBeforeRead();
        assertThat(before & 1).isZero();
        assertThat(cell.tryBeginWrite(before)).isTrue();
        assertThat(cell.versionBeforeRead() & 1).as("odd while the write is under way").isOne();
        assertThat(cell.unchangedSince(before)).isFalse();
        cell.endWrite(before, false);
        int after = cell.versionBeforeRead();
        assertThat(after & 1).isZero();
        assertThat(after).isNotEqualTo(before);
        assertThat(cell.unchangedSince(before)).as("a read that spanned the whole write").isFalse();
        assertThat(cell.unchangedSince(after)).isTrue();
    }

    @Test
    void aWriteIsTakenOnlyFromTheVersionSeenAndOnlyOnce() {
        Cell cell = new Cell();
        int seen = cell.versionBeforeRead();
        assertThat(cell.tryBeginWrite(seen)).isTrue();
        assertThat(cell.tryBeginWrite(seen)).as("a second writer while the first writes").isFalse();
        assertThat(cell.tryBeginWrite(cell.versionBeforeRead())).as("from the odd version").isFalse();
        cell.endWrite(seen, false);
        assertThat(cell.tryBeginWrite(seen)).as("from the version before the last write").isFalse();
        int now = cell.versionBeforeRead();
        assertThat(cell.tryBeginWrite(now)).isTrue();
        cell.abandonWrite(now);
        assertThat(cell.versionBeforeRead()).as("a write that changed nothing leaves the version").isEqualTo(now);
        assertThat(cell.beginWrite()).isEqualTo(now);
        cell.endWrite(now, false);
    }

    @Test
    void theHintIsWhatTheLastWriteSaidAndEveryWriteMovesTheVersion() {
        Cell cell = new Cell();
        int seen = cell.versionBeforeRead();
        cell.endWrite(cell.beginWrite(), true);
        assertThat(cell.versionBeforeRead() & Cell.READ_FIRST).isNotZero();
        assertThat(cell.versionBeforeRead()).isNotEqualTo(seen);
        seen = cell.versionBeforeRead();
        cell.endWrite(cell.beginWrite(), true);
        assertThat(cell.versionBeforeRead() & Cell.READ_FIRST).isNotZero();
        assertThat(cell.versionBeforeRead()).as("a write that keeps the hint still moves the version")
                .isNotEqualTo(seen);
        cell.endWrite(cell.beginWrite(), false);
        assertThat(cell.versionBeforeRead() & Cell.READ_FIRST).isZero();
        assertThat(cell.retired()).isFalse();
    }

    @Test
    void aRetiredCellStaysOddSoNoReadValidatesAndNoWriterTakesIt() {
        Cell cell = new Cell();
        cell.endWrite(cell.beginWrite(), true);
        int held = cell.beginWrite();
        assertThat(Cell.retired(held)).isFalse();
        cell.retireHeld();
        assertThat(cell.retired()).isTrue();
        int v = cell.versionBeforeRead();
        assertThat(v & 1).isOne();
        assertThat(cell.versionWhenSettled()).as("a waiter is not kept waiting by a retired cell").isEqualTo(v);
        assertThat(cell.tryBeginWrite(v)).isFalse();
        assertThat(Cell.retired(cell.beginWrite())).isTrue();
    }

    @Test
    void theWriteCountWrapsWithoutTouchingTheRetiredBit() {
        Cell cell = new Cell();
        int v = 0x7FFF_FFFC;    // the highest count, hint clear
        cell.endWrite(v, false);
        int wrapped = cell.versionBeforeRead();
        assertThat(Cell.retired(wrapped)).isFalse();
        assertThat(wrapped).isZero();
    }

    @Test
    void aThreadWaitingForTheWriteTakesItOnceTheWriterEndsAtTheVersionThatWriterLeft() throws Exception {
        Cell cell = new Cell();
        int before = cell.beginWrite();
        CompletableFuture<Integer> waiter = CompletableFuture.supplyAsync(() -> {
            int taken = cell.beginWrite();  // spins, then yields, until the write below ends
            cell.endWrite(taken, false);
            return taken;
        });
        assertThat(waiter).as("no second writer while the first writes").isNotDone();
        cell.endWrite(before, true);
        int taken = waiter.get(60, TimeUnit.SECONDS);
        assertThat(taken).as("taken after the first write ended").isNotEqualTo(before);
        assertThat(taken & Cell.READ_FIRST).as("the first write's hint").isNotZero();
        assertThat(cell.versionBeforeRead() & 1).isZero();
    }
}
