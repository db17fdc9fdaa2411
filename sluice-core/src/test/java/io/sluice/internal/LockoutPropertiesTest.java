package io.sluice.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Decision;
import io.sluice.Limit;
import io.sluice.Lockout;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.Store;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * A rule with a lockout against its definition (the {@link Lockout} Javadoc), through the in-memory store: while
 * a key is locked out every decision is a lockout with the time left and the limits see nothing; otherwise the
 * rule decides as the same rule without a lockout on another store that saw only the requests that were not
 * locked out, and the rejection that completes {@code after} rejections within {@code within} of the first
 * locks the key out for {@code for}. Reset lifts the lockout and clears the count.
 */
class LockoutPropertiesTest {

    /** An operation: a request kind (0 try, 1 best effort, 2 reserve, 3 peek, 4 reset), after a clock advance. */
    record Op(long advanceMicros, int kind, long permits) {}

    private final RuleEvaluatorPropertiesTest rules = new RuleEvaluatorPropertiesTest();

    @Provide
    Arbitrary<List<Limit>> limits() {
        // Rules of one limit too: the in-memory store's path for them must leave a rule with a lockout alone.
        return Arbitraries.oneOf(rules.rules(), rules.rules().map(l -> l.subList(0, 1)));
    }

    @Provide
    Arbitrary<Lockout> lockouts() {
        return Combinators.combine(Arbitraries.longs().between(1, 4),
                Arbitraries.of(300_000L, 1_000_000L, 3_000_000L),
                Arbitraries.of(500_000L, 2_000_000L))
                .as((after, within, duration) -> Lockout.of(after, Duration.ofNanos(within * 1000),
                        Duration.ofNanos(duration * 1000)));
    }

    @Provide
    Arbitrary<List<Op>> ops() {
        return Combinators.combine(
                Arbitraries.longs().between(0, 400_000),
                Arbitraries.integers().between(0, 24).map(k -> k < 14 ? 0 : k < 17 ? 1 : k < 20 ? 2 : k < 24 ? 3 : 4),
                Arbitraries.longs().between(1, 3))
                .as(Op::new).list().ofMinSize(1).ofMaxSize(80);
    }

    @Property(tries = 400)
    void lockoutBlocksAfterRejectionsWithinThePeriodAndOtherwiseTheLimitsDecide(
            @ForAll("limits") List<Limit> limits, @ForAll("lockouts") Lockout lockout, @ForAll("ops") List<Op> ops) {
        AtomicLong now = new AtomicLong(1_767_225_600_000_000L);
        Rule plainRule = Rule.of("r", limits);
        Rule locking = plainRule.withLockout(lockout);
        Store store = Store.memory().clock(now::get).build();
        Store plain = Store.memory().clock(now::get).build();
        long count = 0;
        long since = 0;
        long until = 0;
        for (Op op : ops) {
            long t = now.addAndGet(op.advanceMicros());
            if (op.kind() == 4) {
                store.reset(locking, "k");
                plain.reset(plainRule, "k");
                count = 0;
                until = 0;
                continue;
            }
            Request request = switch (op.kind()) {
                case 0 -> Request.tryAcquire(op.permits());
                case 1 -> Request.tryAcquireAtMost(op.permits());
                case 2 -> Request.reserve(op.permits(), 300_000);
                default -> Request.peek(op.permits());
            };
            Decision d = store.decide(locking, "k", request);
            if (t < until) {
                assertThat(d).as("locked out at %d", t).isEqualTo(Decision.lockout(until - t, Decision.Source.STORE));
                continue;
            }
            Decision expected = plain.decide(plainRule, "k", request);
            if (!expected.allowed() && request.op() != Request.Op.PEEK) {
                if (count == 0 || t - since >= lockout.withinMicros()) {
                    count = 0;
                    since = t;
                }
                count++;
                if (count >= lockout.after()) {
                    count = 0;
                    until = t + lockout.durationMicros();
                    expected = Decision.lockout(lockout.durationMicros(), Decision.Source.STORE);
                }
            }
            assertThat(d).as("%s at %d", request, t).isEqualTo(expected);
        }
    }

    @Property(tries = 100)
    void aRuleWithALockoutThatNeverTriggersDecidesAsTheRuleWithout(@ForAll("limits") List<Limit> limits,
                                                                   @ForAll("ops") List<Op> ops) {
        AtomicLong now = new AtomicLong(1_767_225_600_000_000L);
        Rule plainRule = Rule.of("r", limits);
        // More rejections than a run can have: the lockout only counts.
        Rule locking = plainRule.withLockout(Lockout.of(1_000, Duration.ofDays(1), Duration.ofDays(1)));
        Store store = Store.memory().clock(now::get).build();
        Store plain = Store.memory().clock(now::get).build();
        for (Op op : ops) {
            now.addAndGet(op.advanceMicros());
            if (op.kind() == 4) {
                store.reset(locking, "k");
                plain.reset(plainRule, "k");
                continue;
            }
            Request request = op.kind() == 3 ? Request.peek(op.permits()) : Request.tryAcquire(op.permits());
            assertThat(store.decide(locking, "k", request)).isEqualTo(plain.decide(plainRule, "k", request));
        }
    }
}
