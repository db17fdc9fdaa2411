package io.sluice.internal.algorithm;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Limit;
import io.sluice.TokenBucket;
import io.sluice.TokenBucket.Refill;
import io.sluice.internal.algorithm.BucketRun.Req;
import io.sluice.internal.algorithm.TokenBucketAlgorithm.State;
import java.math.BigInteger;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.constraints.LongRange;

class TokenBucketPropertiesTest {

    @Provide
    Arbitrary<TokenBucket> buckets() {
        Arbitrary<Long> capacity = Arbitraries.longs().between(1, 20);
        Arbitrary<Long> refill = Arbitraries.longs().between(1, 12);
        Arbitrary<Long> period = Arbitraries.frequencyOf(
                Tuple.of(1, Arbitraries.longs().between(1, 10)),
                Tuple.of(3, Arbitraries.longs().between(11, 2_000_000)),
                Tuple.of(1, Arbitraries.of(1_000L, 60_000L, 1_000_000L)));
        Arbitrary<Refill> style = Arbitraries.of(Refill.class);
        Arbitrary<Long> initial = Arbitraries.longs().between(-10, 20);
        return Combinators.combine(capacity, refill, period, style, initial).as((c, r, p, s, i) ->
                new TokenBucket("tb", c, r, Duration.ofNanos(p * 1_000), s, i < 0 ? c : Math.min(i, c)));
    }

    @Provide
    Arbitrary<List<Req>> requests() {
        return BucketRun.requests(Arbitraries.longs().between(0, 20));
    }

    @Property(tries = 400)
    void tokensStayInBoundsAndUseTimesRespectTheRefill(@ForAll("buckets") TokenBucket limit,
                                                      @ForAll("requests") List<Req> requests,
                                                      @ForAll @LongRange(max = 1L << 40) long start) {
        TokenBucketAlgorithm tb = new TokenBucketAlgorithm(limit);
        State state = null;
        long now = start;
        boolean triesOnly = true;
        List<BucketRun.Use> uses = new ArrayList<>();
        for (Req req : requests) {
            now += req.advance();
            long permits = Math.min(req.permits(), limit.capacity());
            long grantable = tb.grantable(state, now, permits);
            assertThat(tb.step(state, now, grantable, 0).allowed()).isTrue();
            if (grantable < permits) {
                assertThat(tb.step(state, now, grantable + 1, 0).allowed()).isFalse();
            }
            Step<State> step = tb.step(state, now, permits, req.maxWait());
            BucketRun.assertSane(step, state, req.maxWait(), recordsCreation(limit));
            if (step.allowed()) {
                if (permits > 0) {
                    uses.add(new BucketRun.Use(now + step.waitMicros(), permits));
                }
                triesOnly &= step.waitMicros() == 0;
                state = step.admitted();
            } else {
                state = step.rejected();
            }
            if (state != null) {
                assertThat(state.tokens()).isLessThanOrEqualTo(limit.capacity());
                assertThat(limit.capacity() - state.tokens()).isLessThanOrEqualTo(TokenBucketAlgorithm.MAX_DEFICIT);
                assertThat(state.roundingError()).isBetween(0L, reducedPeriod(limit) - 1);
            }
        }
        assertUseTimeBound(limit, uses, 1);
        if (triesOnly) {
            assertUseTimeBound(limit, uses, 0);
        }
    }

    /** Permits usable in [x, y] ≤ capacity + refill(y − x + slack), for every window between two uses. */
    private static void assertUseTimeBound(TokenBucket limit, List<BucketRun.Use> uses, long slack) {
        BucketRun.assertWindows(uses, (x, y) -> limit.capacity() + refillIn(limit, y - x + slack));
    }

    private static long refillIn(TokenBucket limit, long micros) {
        long period = Arith.micros(limit.refillPeriod());
        if (limit.refill() == Refill.GREEDY) {
            return Arith.mulDivCeil(limit.refillTokens(), micros, period);
        }
        return limit.refillTokens() * Arith.ceilDiv(micros, period);
    }

    private static long reducedPeriod(TokenBucket limit) {
        long period = Arith.micros(limit.refillPeriod());
        return period / BigInteger.valueOf(limit.refillTokens()).gcd(BigInteger.valueOf(period)).longValueExact();
    }

    @Property(tries = 300)
    void aStateAtOrAfterExpiresAtDecidesLikeNoState(@ForAll("buckets") TokenBucket limit,
                                                   @ForAll("requests") List<Req> requests,
                                                   @ForAll @LongRange(max = 20) long permits,
                                                   @ForAll @LongRange(max = 5_000_000) long after,
                                                   @ForAll @LongRange(max = 3_000_000) long maxWait) {
        TokenBucketAlgorithm tb = new TokenBucketAlgorithm(limit);
        State state = run(tb, requests);
        if (state == null) {
            return;
        }
        long expiresAt = tb.expiresAt(state);
        if (expiresAt == Long.MAX_VALUE) {
            return;
        }
        long n = Math.min(permits, limit.capacity());
        long at = expiresAt + after;
        Step<State> kept = tb.step(state, at, n, maxWait);
        Step<State> fresh = tb.step(null, at, n, maxWait);
        assertThat(BucketRun.decision(kept)).isEqualTo(BucketRun.decision(fresh));
        if (n > 0) {
            assertThat(kept.admitted()).isEqualTo(fresh.admitted());
        }
        if (expiresAt > state.lastRefill()) {
            // exact: one µs earlier the bucket is not full yet, unlike a new key
            assertThat(tb.step(state, expiresAt - 1, 0, 0).remaining()).isLessThan(limit.capacity());
        }
    }

    /** A bucket that starts below capacity records a key's creation, also by a rejection. */
    private static boolean recordsCreation(TokenBucket limit) {
        return limit.initialTokens() < limit.capacity();
    }

    /**
     * Dropping state is invisible: a key whose store drops its state as soon as it expires decides every request
     * as a key that kept it, also across idle spells long enough to fill the bucket.
     */
    @Property(tries = 400)
    void aKeyThatDropsItsStateDecidesAsOneThatKeepsIt(@ForAll("buckets") TokenBucket limit,
                                                     @ForAll("idleRequests") List<Req> requests,
                                                     @ForAll @LongRange(max = 1L << 40) long start) {
        DroppedStateRun.assertInvisible(new TokenBucketAlgorithm(limit), requests, start);
    }

    @Provide
    Arbitrary<List<Req>> idleRequests() {
        return DroppedStateRun.requests(Arbitraries.longs().between(0, 20), 60_000_000);
    }

    /** A key idle until full admits a whole bucket at once, whatever initialTokens (Bucket4j's bucket). */
    @Property(tries = 400)
    void aKeyIdleUntilFullServesTheWholeBucket(@ForAll("buckets") TokenBucket limit,
                                              @ForAll("requests") List<Req> requests) {
        TokenBucketAlgorithm tb = new TokenBucketAlgorithm(limit);
        State state = run(tb, requests);
        if (state == null) {
            return; // never decided (only peeks), or a bucket starting full that filled up: a new key
        }
        long now = state.lastRefill() + 3_000_000;
        long resetAfter = tb.step(state, now, 0, 0).resetAfterMicros();
        assertThat(resetAfter).isLessThan(Long.MAX_VALUE);
        long full = now + resetAfter;
        if (now >= tb.expiresAt(state) || full >= tb.expiresAt(state)) {
            state = null; // what a store holds then (only buckets starting full expire)
        }
        Step<State> whole = tb.step(state, full, limit.capacity(), 0);
        assertThat(whole.allowed()).as("a whole bucket after %d µs idle", full - now).isTrue();
    }

    /** A bucket starting below the permits asked (e.g. at 0) admits once the refill brought them. */
    @Property(tries = 300)
    void aBucketStartingShortAdmitsOnceRefilled(@ForAll("buckets") TokenBucket limit,
                                               @ForAll @LongRange(min = 1, max = 20) long permits,
                                               @ForAll @LongRange(max = 1L << 40) long start) {
        TokenBucketAlgorithm tb = new TokenBucketAlgorithm(limit);
        long n = Math.min(permits, limit.capacity());
        Step<State> first = tb.step(null, start, n, 0);
        if (first.allowed()) {
            assertThat(limit.initialTokens()).isGreaterThanOrEqualTo(n);
            return;
        }
        assertThat(first.retryAfterMicros()).isBetween(1L, Arith.MAX_TIME);
        State created = first.rejected();
        if (recordsCreation(limit)) {
            assertThat(created).isNotNull();
        }
        long retry = start + first.retryAfterMicros();
        assertThat(tb.step(created, retry - 1, n, 0).allowed()).isFalse();
        assertThat(tb.step(created, retry, n, 0).allowed()).isTrue();
    }

    private static State run(TokenBucketAlgorithm tb, List<Req> requests) {
        State state = null;
        long now = 1_000_000_000;
        for (Req req : requests) {
            now += req.advance();
            Step<State> step = tb.step(state, now, Math.min(req.permits(), tb.limit().capacity()), req.maxWait());
            state = step.allowed() ? step.admitted() : step.rejected();
        }
        return state;
    }

    /** Bucket4j's refill (BucketState64BitsInteger.refill) with the unreduced rate, in exact integers. */
    @Property(tries = 500)
    void refillIsBucket4jsWithTheUnreducedFraction(@ForAll("buckets") TokenBucket limit,
                                                  @ForAll @LongRange(min = -30, max = 20) long tokens,
                                                  @ForAll("requests") List<Req> steps) {
        TokenBucketAlgorithm tb = new TokenBucketAlgorithm(limit);
        long period = Arith.micros(limit.refillPeriod());
        long g = period / reducedPeriod(limit);
        long capacity = limit.capacity();
        long start = limit.refill() == Refill.INTERVAL_ALIGNED ? 0 : 123;
        State ours = new State(Math.min(tokens, capacity), start, 0);
        long size = ours.tokens();
        long last = start;
        BigInteger error = BigInteger.ZERO; // Bucket4j's roundingError, in units of 1/period token
        long now = start;
        for (Req req : steps) {
            now += req.advance();
            ours = tb.refill(ours, now);
            long refillTime = now;
            if (limit.refill() != Refill.GREEDY) {
                refillTime -= (now - last) % period; // incompleteIntervalCorrection
            }
            if (refillTime > last) {
                BigInteger divided = BigInteger.valueOf(limit.refillTokens())
                        .multiply(BigInteger.valueOf(refillTime - last)).add(error);
                BigInteger[] qr = divided.divideAndRemainder(BigInteger.valueOf(period));
                last = refillTime;
                if (size >= capacity || BigInteger.valueOf(capacity - size).compareTo(qr[0]) <= 0) {
                    size = capacity;
                    error = BigInteger.ZERO;
                } else {
                    size += qr[0].longValueExact();
                    error = qr[1];
                }
            }
            assertThat(ours.tokens()).isEqualTo(size);
            assertThat(BigInteger.valueOf(ours.roundingError() * g)).isEqualTo(error);
            boolean phaseForgotten = limit.refill() == Refill.INTERVAL && size == capacity;
            assertThat(ours.lastRefill()).isEqualTo(phaseForgotten ? now : last);
            if (phaseForgotten) {
                last = now;
            }
            long take = Math.min(req.permits(), Math.max(0, size));
            ours = new State(ours.tokens() - take, ours.lastRefill(), ours.roundingError());
            size -= take;
        }
    }

    @Provide
    Arbitrary<TokenBucket> extremeBuckets() {
        Arbitrary<Long> capacity = Arbitraries.of(1L, 7L, Limit.MAX_COUNT - 1, Limit.MAX_COUNT);
        Arbitrary<Long> refill = Arbitraries.of(1L, 3L, 1_000_000L, Limit.MAX_COUNT);
        Arbitrary<Duration> period = Arbitraries.of(Duration.ofNanos(1_000), Duration.ofNanos(7_000),
                Duration.ofSeconds(1), Duration.ofDays(1), Limit.MAX_DURATION);
        Arbitrary<Refill> style = Arbitraries.of(Refill.class);
        return Combinators.combine(capacity, refill, period, style).as(TokenBucketPropertiesTest::bucketOrNull)
                .filter(Objects::nonNull);
    }

    /** The bucket, or null when TokenBucket rejects the rate (a·b > 2^53 after reduction). */
    private static TokenBucket bucketOrNull(long capacity, long refill, Duration period, Refill style) {
        try {
            return new TokenBucket("tb", capacity, refill, period, style, capacity);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    @Property(tries = 300)
    void noOverflowNearTheEndOfTimeWithMaxCounts(@ForAll("extremeBuckets") TokenBucket limit,
                                                @ForAll("extremeRequests") List<Req> requests) {
        TokenBucketAlgorithm tb = new TokenBucketAlgorithm(limit);
        State state = null;
        for (Req req : requests) {
            long now = Arith.MAX_TIME - req.advance();
            Step<State> step = tb.step(state, now, req.permits() % (limit.capacity() + 1), req.maxWait());
            BucketRun.assertSane(step, state, req.maxWait(), recordsCreation(limit));
            state = step.allowed() ? step.admitted() : step.rejected();
            if (state != null) {
                assertThat(state.tokens()).isLessThanOrEqualTo(limit.capacity());
                assertThat(limit.capacity() - state.tokens()).isLessThanOrEqualTo(TokenBucketAlgorithm.MAX_DEFICIT);
                assertThat(tb.expiresAt(state)).satisfiesAnyOf(
                        e -> assertThat(e).isLessThanOrEqualTo(Arith.MAX_TIME),
                        e -> assertThat(e).isEqualTo(Long.MAX_VALUE));
            }
        }
    }

    @Provide
    Arbitrary<List<Req>> extremeRequests() {
        return BucketRun.extremeRequests(Arbitraries.of(0L, 1L, Limit.MAX_COUNT - 1, Limit.MAX_COUNT));
    }

    @Property(tries = 200)
    void migrateKeepsTheInvariants(@ForAll("buckets") TokenBucket before, @ForAll("buckets") TokenBucket after,
                                   @ForAll("requests") List<Req> requests,
                                   @ForAll @LongRange(max = 3_000_000) long later) {
        State state = run(new TokenBucketAlgorithm(before), requests);
        if (state == null) {
            return;
        }
        TokenBucketAlgorithm tb = new TokenBucketAlgorithm(after);
        State migrated = tb.migrate(state, before, state.lastRefill() + later);
        assertThat(migrated.tokens()).isLessThanOrEqualTo(after.capacity());
        assertThat(migrated.roundingError()).isBetween(0L, reducedPeriod(after) - 1);
        if (after.refill() == Refill.INTERVAL_ALIGNED) {
            assertThat(migrated.lastRefill() % Arith.micros(after.refillPeriod())).isZero();
        }
        Step<State> next = tb.step(migrated, state.lastRefill() + later, 1, 0);
        BucketRun.assertSane(next, migrated, 0);
    }
}
