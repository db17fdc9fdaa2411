package io.sluice.internal.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.FixedWindow;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.Store;
import io.sluice.Ticket;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The in-memory store's ticket table: its bound, its expiry, open ids, and limits changed since the charge. */
class MemorySettlingTest {

    private final AtomicLong now = new AtomicLong(1_800_000_000_000_000L);
    private final Rule rule = Rule.of("tokens", FixedWindow.of(10, Duration.ofMinutes(1)).named("per_minute"));

    @Test
    void theTicketTableHoldsAsManyTicketsAsTheStoreHoldsKeysAndForgetsTheOldest() {
        try (Store store = Store.memory().clock(now::get).maxKeys(2).build()) {
            RateLimiter limiter = RateLimiter.builder(rule).store(store).build();
            Ticket first = limiter.tryCharge("a", 1).ticket();
            Ticket second = limiter.tryCharge("b", 1).ticket();
            Ticket third = limiter.tryCharge("c", 1).ticket();
            assertThat(limiter.settle(first, 0).settled()).as("forgotten: stays charged").isFalse();
            assertThat(limiter.settle(second, 0).settled()).isTrue();
            assertThat(limiter.settle(third, 0).settled()).isTrue();
        }
    }

    @Test
    void expiredTicketsLeaveTheTableAsNewOnesComeIn() {
        TicketBook book = new TicketBook(100);
        for (int i = 0; i < 3; i++) {
            book.add(new TicketBook.Id("r", "k", "t" + i), new TicketBook.Open(rule, 1, new long[1], 10), 0);
        }
        assertThat(book.size()).isEqualTo(3);
        book.add(new TicketBook.Id("r", "k", "later"), new TicketBook.Open(rule, 1, new long[1], 100), 10);
        assertThat(book.size()).as("the three expired at 10 are dropped").isEqualTo(1);
        assertThat(book.take(new TicketBook.Id("r", "k", "later"), 99)).isNotNull();
        assertThat(book.take(new TicketBook.Id("r", "k", "later"), 99)).as("taken once").isNull();
    }

    @Test
    void anOpenTicketIdCannotBeChargedAgainUntilItIsSettled() {
        try (Store store = Store.memory().clock(now::get).build()) {
            long lifetime = Duration.ofMinutes(1).toNanos() / 1000;
            store.charge(rule, "k", 2, "llm-call-1", lifetime);
            assertThatThrownBy(() -> store.charge(rule, "k", 2, "llm-call-1", lifetime))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("ticket id 'llm-call-1' is already open for key 'k'");
            assertThat(store.settle(rule, "k", "llm-call-1", 1).settled()).isTrue();
            assertThat(store.charge(rule, "k", 2, "llm-call-1", lifetime).allowed()).isTrue();
        }
    }

    @Test
    void aLimitChangedSinceTheChargeIsLeftAloneByTheSettlement() {
        try (Store store = Store.memory().clock(now::get).build()) {
            RateLimiter limiter = RateLimiter.builder(rule).store(store).build();
            Ticket ticket = limiter.tryCharge("k", 8).ticket();
            limiter.updateLimit(FixedWindow.of(20, Duration.ofMinutes(1)).named("per_minute"));
            assertThat(limiter.settle(ticket, 0).settled()).isTrue();
            assertThat(limiter.peek("k", 0).remaining()).as("the count kept by the change, not refunded").isEqualTo(12);
        }
    }
}
