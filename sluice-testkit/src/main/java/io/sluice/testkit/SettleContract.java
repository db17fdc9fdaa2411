package io.sluice.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.CalendarWindow;
import io.sluice.Charge;
import io.sluice.Concurrency;
import io.sluice.FixedWindow;
import io.sluice.Gcra;
import io.sluice.LeakyBucket;
import io.sluice.Limit;
import io.sluice.Lockout;
import io.sluice.RateLimiter;
import io.sluice.RefreshPeriod;
import io.sluice.RollingWindow;
import io.sluice.Rule;
import io.sluice.Settlement;
import io.sluice.SlidingLog;
import io.sluice.SlidingWindow;
import io.sluice.SluiceListener;
import io.sluice.SmoothBursty;
import io.sluice.Ticket;
import io.sluice.Tier;
import io.sluice.TokenBucket;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Estimated charges settled later ({@link RateLimiter#tryCharge}, {@link RateLimiter#settle}) against a store,
 * unchanged for every store that extends it: the refund goes back into what was charged while it still
 * counts, an extra charge puts the key in debt, a ticket settles once (and not after it expired), and the
 * algorithms that cannot refund are refused before anything is charged. Time is a {@link ManualClock} the
 * store reads. Each test uses a fresh rule name, so stores may be shared between tests.
 */
public abstract class SettleContract extends StoreFixture {

    protected RateLimiter limiter(Limit... limits) {
        return limiter(Rule.of("settle_" + UUID.randomUUID().toString().substring(0, 8), limits));
    }

    protected RateLimiter limiter(Rule rule) {
        return limiterFor(rule, SluiceListener.NONE);
    }

    private static final Duration MINUTE = Duration.ofMinutes(1);

    /** Every algorithm that settles, each admitting 10 permits at once. */
    protected static Stream<Limit> settleable() {
        return Stream.of(
                FixedWindow.of(10, MINUTE),
                CalendarWindow.of(10, CalendarWindow.Period.DAY, ZoneOffset.UTC),
                SlidingWindow.of(10, MINUTE),
                RollingWindow.of(10, MINUTE, Duration.ofSeconds(10)),
                SlidingLog.of(10, MINUTE),
                Gcra.of(10, MINUTE).withBurst(10),
                TokenBucket.of(10, 1, Duration.ofSeconds(6)));
    }

    @ParameterizedTest
    @MethodSource("settleable")
    protected void aRefundGivesBackTheUnusedPartOfTheEstimate(Limit limit) {
        RateLimiter limiter = limiter(limit);
        Charge charge = limiter.tryCharge("k", 6);
        assertThat(charge.allowed()).isTrue();
        assertThat(charge.ticket().estimate()).isEqualTo(6);
        assertThat(limiter.tryAcquire("k", 5).allowed()).as("6 + 5 > 10 before the refund").isFalse();

        Settlement s = limiter.settle(charge.ticket(), 1);
        assertThat(s).isEqualTo(new Settlement(true, 6, 1));
        assertThat(s.refunded()).isEqualTo(5);
        assertThat(limiter.tryAcquire("k", 9).allowed()).as("1 used, 9 left").isTrue();
        assertThat(limiter.tryAcquire("k", 1).allowed()).isFalse();
    }

    @ParameterizedTest
    @MethodSource("settleable")
    protected void anExtraChargeIsTakenEvenPastTheLimit(Limit limit) {
        RateLimiter limiter = limiter(limit);
        Charge charge = limiter.tryCharge("k", 4);
        Settlement s = limiter.settle(charge.ticket(), 12);
        assertThat(s.extra()).isEqualTo(8);
        assertThat(limiter.tryAcquire("k", 1).allowed()).as("12 of 10 used: in debt").isFalse();
    }

    @ParameterizedTest
    @MethodSource("settleable")
    protected void aTicketSettlesOnce(Limit limit) {
        RateLimiter limiter = limiter(limit);
        Charge charge = limiter.tryCharge("k", 8);
        assertThat(limiter.settle(charge.ticket(), 2).settled()).isTrue();
        Settlement again = limiter.settle(charge.ticket(), 0);
        assertThat(again.settled()).isFalse();
        assertThat(again).isEqualTo(Settlement.unknown());
        assertThat(limiter.tryAcquire("k", 8).allowed()).as("the second settlement refunded nothing").isTrue();
        assertThat(limiter.tryAcquire("k", 1).allowed()).isFalse();
    }

    @Test
    void aTicketSettledByManyThreadsAtOnceSettlesOnce() throws Exception {
        RateLimiter limiter = limiter(FixedWindow.of(100, MINUTE));
        Ticket ticket = limiter.tryCharge("k", 50).ticket();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<Settlement>> results = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                results.add(pool.submit(() -> limiter.settle(ticket, 10)));
            }
            int settled = 0;
            for (Future<Settlement> f : results) {
                settled += f.get().settled() ? 1 : 0;
            }
            assertThat(settled).isEqualTo(1);
        } finally {
            pool.shutdownNow();
        }
        assertThat(limiter.peek("k", 0).remaining()).as("one refund of 40").isEqualTo(90);
    }

    @Test
    void aRefundAfterTheWindowEndedGivesNothingToTheNextWindow() {
        RateLimiter limiter = limiter(FixedWindow.of(10, MINUTE));
        clock.setMicros(1_800_000_000_000_000L);     // a whole minute
        Ticket ticket = limiter.tryCharge("k", 8).ticket();
        clock.advance(MINUTE);
        assertThat(limiter.tryAcquire("k", 10).allowed()).isTrue();
        assertThat(limiter.settle(ticket, 0).settled()).isTrue();
        assertThat(limiter.tryAcquire("k", 1).allowed()).as("the next window got nothing back").isFalse();
    }

    /**
     * gcra (T = 6 s, burst 10) gives back the part of a charge still ahead of now, less what other refunds since
     * moved the TAT back: the second refund below would let 11 pass at 40 s were it to count only its own charge.
     */
    @Test
    void aGcraRefundCountsTheRefundsGivenSinceItsCharge() {
        RateLimiter limiter = limiter(Gcra.of(10, MINUTE).withBurst(10));
        clock.setMicros(1_800_000_000_000_000L);
        Ticket first = limiter.tryCharge("k", 5).ticket();
        Ticket second = limiter.tryCharge("k", 5).ticket();
        assertThat(limiter.settle(first, 0).refunded()).isEqualTo(5);
        assertThat(limiter.peek("k", 0).remaining()).as("5 of the first given back").isEqualTo(5);
        clock.advance(Duration.ofSeconds(40));
        assertThat(limiter.tryAcquire("k", 10).allowed()).as("idle since 30 s: the whole burst").isTrue();
        assertThat(limiter.settle(second, 0).settled()).isTrue();
        assertThat(limiter.tryAcquire("k", 1).allowed()).as("the second charge was swallowed at 30 s").isFalse();
    }

    @Test
    void aGcraRefundGivesBackOnlyWhatIsStillAhead() {
        RateLimiter limiter = limiter(Gcra.of(10, MINUTE).withBurst(10));
        clock.setMicros(1_800_000_000_000_000L);
        Ticket ticket = limiter.tryCharge("k", 10).ticket();
        clock.advance(Duration.ofSeconds(30));
        assertThat(limiter.peek("k", 0).remaining()).isEqualTo(5);
        limiter.settle(ticket, 0);
        assertThat(limiter.tryAcquire("k", 10).allowed()).as("as if nothing had been charged").isTrue();
        assertThat(limiter.tryAcquire("k", 1).allowed()).isFalse();
    }

    @Test
    void anUnsettledTicketExpiresAndStaysChargedAtTheEstimate() {
        RateLimiter limiter = limiter(FixedWindow.of(10, Duration.ofHours(1)));
        clock.setMicros(1_800_000_000_000_000L);
        Ticket ticket = limiter.tryCharge("k", 8, Duration.ofSeconds(30)).ticket();
        clock.advance(Duration.ofSeconds(31));
        assertThat(limiter.settle(ticket, 0).settled()).isFalse();
        assertThat(limiter.peek("k", 0).remaining()).isEqualTo(2);
    }

    @Test
    void aChargeWithTheIdOfATicketStillOpenIsRefusedAndChargesNothing() {
        Rule rule = Rule.of("settle_id_" + UUID.randomUUID().toString().substring(0, 8), FixedWindow.of(10, MINUTE));
        RateLimiter limiter = limiter(rule);
        long life = Ticket.lifetimeMicros(Ticket.DEFAULT_LIFETIME);
        assertThat(store.charge(rule, "k", 3, "call-1", life).allowed()).isTrue();
        assertThatThrownBy(() -> store.charge(rule, "k", 3, "call-1", life))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ticket id 'call-1' is already open for key 'k'");
        assertThat(limiter.peek("k", 0).remaining()).as("the refused charge charged nothing").isEqualTo(7);
        // The id is unique per rule and key while its ticket lives: another key may use it, and so may a
        // charge after the ticket settled.
        assertThat(store.charge(rule, "k2", 3, "call-1", life).allowed()).isTrue();
        assertThat(store.settle(rule, "k", "call-1", 3).settled()).isTrue();
        assertThat(store.charge(rule, "k", 2, "call-1", life).allowed()).isTrue();
        assertThat(limiter.peek("k", 0).remaining()).isEqualTo(5);
    }

    @Test
    void aRejectedChargeHasNoTicketAndChargesNothing() {
        RateLimiter limiter = limiter(FixedWindow.of(10, MINUTE));
        assertThat(limiter.tryCharge("k", 8).allowed()).isTrue();
        Charge rejected = limiter.tryCharge("k", 5);
        assertThat(rejected.allowed()).isFalse();
        assertThat(rejected.ticket()).isNull();
        assertThat(rejected.decision().retryAfterMicros()).isPositive();
        assertThat(limiter.peek("k", 0).remaining()).isEqualTo(2);
    }

    @Test
    protected void aTicketCoversEveryLimitOfTheRule() {
        RateLimiter limiter = limiter(FixedWindow.of(10, MINUTE).named("per_minute"),
                SlidingLog.of(20, Duration.ofHours(1)).named("per_hour"));
        Ticket ticket = limiter.tryCharge("k", 10).ticket();
        limiter.settle(ticket, 2);
        assertThat(limiter.tryAcquire("k", 8).allowed()).isTrue();
        clock.advance(MINUTE);
        assertThat(limiter.tryAcquire("k", 10).allowed()).as("the hour counts 2 + 8 + 10").isTrue();
        assertThat(limiter.peek("k", 1).allowed()).isFalse();
        assertThat(limiter.peek("k", 1).limit()).isEqualTo("per_hour");
    }

    @Test
    void aShadowLimitThatWouldHaveRejectedIsSettledWithTheOthers() {
        Rule rule = Rule.of("settle_shadow_" + UUID.randomUUID().toString().substring(0, 8),
                FixedWindow.of(10, MINUTE).named("enforced"), FixedWindow.of(6, MINUTE).named("trial"))
                .withShadow("trial");
        RateLimiter limiter = limiter(rule);
        assertThat(limiter.tryAcquire("k", 3).allowed()).isTrue();
        Charge charge = limiter.tryCharge("k", 5);
        assertThat(charge.allowed()).isTrue();
        assertThat(charge.decision().shadowLimit()).isEqualTo("trial");
        assertThat(limiter.settle(charge.ticket(), 1)).isEqualTo(new Settlement(true, 5, 1));
        assertThat(limiter.peek("k", 0).remaining()).isEqualTo(6);
    }

    @Test
    void aRefundDoesNotUndoALockoutsRejections() {
        Rule rule = Rule.of("settle_lockout_" + UUID.randomUUID().toString().substring(0, 8),
                        FixedWindow.of(10, MINUTE))
                .withLockout(Lockout.of(2, Duration.ofMinutes(15), Duration.ofHours(1)));
        RateLimiter limiter = limiter(rule);
        Ticket ticket = limiter.tryCharge("k", 10).ticket();
        assertThat(limiter.tryAcquire("k").allowed()).isFalse();
        assertThat(limiter.tryAcquire("k").lockedOut()).isTrue();
        assertThat(limiter.settle(ticket, 0).settled()).isTrue();
        assertThat(limiter.tryAcquire("k").lockedOut()).as("still locked out after the refund").isTrue();
    }

    @Test
    void aTierOfLimitsSettlesInItsOwnState() {
        Rule rule = Rule.of("settle_tier_" + UUID.randomUUID().toString().substring(0, 8), FixedWindow.of(10, MINUTE))
                .withTiers(Tier.named("premium").keys("premium-*")
                        .limits(FixedWindow.of(100, MINUTE).named("premium_per_minute")));
        RateLimiter limiter = limiter(rule);
        Charge charge = limiter.tryCharge("premium-1", 90);
        assertThat(charge.decision().tier()).isEqualTo("premium");
        limiter.settle(charge.ticket(), 30);
        assertThat(limiter.peek("premium-1", 0).remaining()).isEqualTo(70);
    }

    @Test
    void algorithmsThatCannotRefundAreRefusedBeforeAnythingIsCharged() {
        for (Limit limit : List.of(SmoothBursty.of(10), Concurrency.of(3, MINUTE), RefreshPeriod.of(10, MINUTE),
                LeakyBucket.of(10, MINUTE))) {
            RateLimiter limiter = limiter(limit);
            long before = limiter.peek("k", 1).remaining();
            assertThatThrownBy(() -> limiter.tryCharge("k", 1))
                    .isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("limit '" + limit.name() + "'")
                    .hasMessageContaining("cannot settle a ticket");
            assertThat(limiter.peek("k", 1).remaining()).as(limit.name()).isEqualTo(before);
        }
    }

    @Test
    void badArgumentsNameTheirField() {
        RateLimiter limiter = limiter(FixedWindow.of(10, MINUTE));
        assertThatThrownBy(() -> limiter.tryCharge("k", 0)).hasMessageContaining("estimate must be in [1, 10]");
        assertThatThrownBy(() -> limiter.tryCharge("k", 11)).hasMessageContaining("estimate must be in [1, 10]");
        assertThatThrownBy(() -> limiter.tryCharge("k", 1, Duration.ZERO)).hasMessageContaining("lifetime must be");
        Ticket ticket = limiter.tryCharge("k", 1).ticket();
        assertThatThrownBy(() -> limiter.settle(ticket, -1)).hasMessageContaining("actual must be in [0, ");
        assertThatThrownBy(() -> limiter.settle(null, 1)).hasMessageContaining("ticket must not be null");
        assertThatThrownBy(() -> new Ticket("a b", "k", 1)).hasMessageContaining("ticket id must be");
    }

    @Test
    void theAsyncCallsDoTheSame() {
        RateLimiter limiter = limiter(FixedWindow.of(10, MINUTE));
        Charge charge = limiter.tryChargeAsync("k", 8, Ticket.DEFAULT_LIFETIME).join();
        assertThat(limiter.settleAsync(charge.ticket(), 3).join()).isEqualTo(new Settlement(true, 8, 3));
        assertThat(limiter.settleAsync(charge.ticket(), 3).join().settled()).isFalse();
        assertThat(limiter.peek("k", 0).remaining()).isEqualTo(7);
    }
}
