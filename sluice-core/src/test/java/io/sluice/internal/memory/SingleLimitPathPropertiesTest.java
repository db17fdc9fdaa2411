package io.sluice.internal.memory;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Concurrency;
import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.Gcra;
import io.sluice.LeakyBucket;
import io.sluice.Limit;
import io.sluice.RateLimiter;
import io.sluice.RefreshPeriod;
import io.sluice.RollingWindow;
import io.sluice.Rule;
import io.sluice.SlidingLog;
import io.sluice.SlidingWindow;
import io.sluice.SmoothBursty;
import io.sluice.SmoothWarmingUp;
import io.sluice.TokenBucket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;

/**
 * The in-memory store's path for rules of one limit ({@code decideOne}) decides exactly as its general path
 * ({@code decideSeveral}, the evaluator over arrays of states): the same decisions, lease results and key count,
 * on random operation sequences of every algorithm, with the limit replaced now and then (migration), resets,
 * releases and a clock that sometimes steps back.
 */
class SingleLimitPathPropertiesTest {

    /** One operation: what, how many permits, how far the clock moves first, which variant of the limit. */
    record Op(int kind, long permits, long advanceMicros, long maxWaitMicros, int variant) {}

    private static final int TRY = 0, AT_MOST = 1, RESERVE = 2, PEEK = 3, RESET = 4, RELEASE = 5, UPDATE = 6;

    @Provide
    Arbitrary<Integer> algorithms() {
        return Arbitraries.integers().between(0, 10);
    }

    @Provide
    Arbitrary<List<Op>> operations() {
        Arbitrary<Integer> kind = Arbitraries.frequencyOf(
                Tuple.of(8, Arbitraries.just(TRY)), Tuple.of(2, Arbitraries.just(AT_MOST)),
                Tuple.of(2, Arbitraries.just(RESERVE)), Tuple.of(2, Arbitraries.just(PEEK)),
                Tuple.of(1, Arbitraries.just(RESET)), Tuple.of(2, Arbitraries.just(RELEASE)),
                Tuple.of(1, Arbitraries.just(UPDATE)));
        Arbitrary<Long> advance = Arbitraries.frequencyOf(
                Tuple.of(4, Arbitraries.just(0L)),
                Tuple.of(6, Arbitraries.longs().between(1, 400_000)),
                Tuple.of(1, Arbitraries.longs().between(-50_000, -1)),
                Tuple.of(1, Arbitraries.longs().between(1_000_000, 5_000_000)));
        Arbitrary<Op> op = Combinators.combine(kind, Arbitraries.longs().between(1, 4), advance,
                Arbitraries.longs().between(0, 2_000_000), Arbitraries.integers().between(0, 2)).as(Op::new);
        return op.list().ofMinSize(1).ofMaxSize(80);
    }

    @Property(tries = 400)
    void aRuleOfOneLimitDecidesAsTheGeneralPath(@ForAll("algorithms") int algorithm,
                                                @ForAll("operations") List<Op> ops) {
        AtomicLong now = new AtomicLong(1_767_225_600_123_456L);
        MemoryStore fast = new MemoryStore(now::get, 1_000, true);
        MemoryStore general = new MemoryStore(now::get, 1_000, false);
        Rule rule = Rule.of("r", limit(algorithm, 0));
        RateLimiter a = RateLimiter.builder(rule).store(fast).build();
        RateLimiter b = RateLimiter.builder(rule).store(general).build();
        long lease = 1;
        for (Op op : ops) {
            now.set(Math.max(0, now.get() + op.advanceMicros()));
            long permits = Math.min(op.permits(), a.rule().maxPermits());
            switch (op.kind()) {
                case TRY -> lease = same(a.tryAcquire("k", permits), b.tryAcquire("k", permits), lease);
                case AT_MOST -> same(a.tryAcquireAtMost("k", op.permits()), b.tryAcquireAtMost("k", op.permits()), 0);
                case RESERVE -> {
                    Duration maxWait = Duration.ofNanos(op.maxWaitMicros() * 1_000);
                    lease = same(a.reserve("k", permits, maxWait), b.reserve("k", permits, maxWait), lease);
                }
                case PEEK -> same(a.peek("k", permits - 1), b.peek("k", permits - 1), 0);
                case RESET -> {
                    a.reset("k");
                    b.reset("k");
                }
                case RELEASE -> assertThat(a.release("k", lease)).isEqualTo(b.release("k", lease));
                default -> {
                    Limit next = limit(algorithm, op.variant());
                    a.updateLimit(next);
                    b.updateLimit(next);
                }
            }
            assertThat(fast.size()).isEqualTo(general.size());
        }
    }

    /** Asserts both decisions are equal; returns the lease granted, or {@code lease} when none was. */
    private static long same(Decision fast, Decision general, long lease) {
        assertThat(fast).isEqualTo(general);
        return fast.lease() >= 0 ? fast.lease() : lease;
    }

    /** Variant {@code v} of a small limit of algorithm {@code i}, all named "l" so that updateLimit replaces it. */
    private static Limit limit(int i, int v) {
        Duration ms = Duration.ofMillis(1);
        Limit l = switch (i) {
            case 0 -> new TokenBucket("l", 3 + v, 1 + v, ms.multipliedBy(200), TokenBucket.Refill.values()[v], 3 + v);
            case 1 -> new TokenBucket("l", 5, 2, ms.multipliedBy(300 + 100 * v), TokenBucket.Refill.GREEDY, 1 + v);
            case 2 -> new Gcra("l", 5 + v, ms.multipliedBy(500), 2 + v);
            case 3 -> new FixedWindow("l", 3 + v, ms.multipliedBy(400 + 200 * (v / 2)),
                    v == 1 ? FixedWindow.Align.FIRST_REQUEST : FixedWindow.Align.EPOCH, v == 2);
            case 4 -> SlidingWindow.of(3 + v, ms.multipliedBy(500 + 250 * v));
            case 5 -> SlidingLog.of(3 + v, ms.multipliedBy(500));
            case 6 -> RollingWindow.of(4 + v, Duration.ofSeconds(1), ms.multipliedBy(100 + 100 * (v % 2)));
            case 7 -> LeakyBucket.of(4 + v, Duration.ofSeconds(1));
            case 8 -> SmoothBursty.of(3.0 + v);
            case 9 -> v == 2 ? RefreshPeriod.of(5, ms.multipliedBy(300)) : RefreshPeriod.of(2 + v, ms.multipliedBy(500));
            default -> v == 1 ? SmoothWarmingUp.of(4.0, Duration.ofSeconds(1)) : Concurrency.of(2 + v, ms.multipliedBy(700));
        };
        return l.named("l");
    }
}
