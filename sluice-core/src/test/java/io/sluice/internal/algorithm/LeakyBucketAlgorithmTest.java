package io.sluice.internal.algorithm;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.LeakyBucket;
import io.sluice.Limit;
import io.sluice.internal.algorithm.LeakyBucketAlgorithm.State;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class LeakyBucketAlgorithmTest {

    private static final long T0 = 1_700_000_000_000_000L;
    private static final long SECOND = 1_000_000;
    private static final long NEVER = Long.MAX_VALUE;

    private static LeakyBucketAlgorithm leaky(long limit, Duration period, long burst, boolean nodelay, long delay) {
        return new LeakyBucketAlgorithm(new LeakyBucket("lb", limit, period, burst, nodelay, delay));
    }

    /**
     * nginx.org/en/docs/http/ngx_http_limit_req_module.html: {@code limit_req_zone ... rate=1r/s;
     * limit_req zone=one burst=5;} "allow not more than 1 request per second at an average, with bursts not
     * exceeding 5 requests": excessive requests are delayed until their number exceeds the burst.
     */
    @Test
    void nginxDocumentationExample() {
        BucketRun<State> run = new BucketRun<>(leaky(1, Duration.ofSeconds(1), 5, false, 0));
        assertThat(run.reserveAt(T0, 1)).isEqualTo("allow wait=0 remaining=5 reset=1000000");
        for (long k = 2; k <= 6; k++) {
            assertThat(run.reserveAt(T0, 1))
                    .isEqualTo("allow wait=" + (k - 1) * SECOND + " remaining=" + (6 - k) + " reset=" + k * SECOND);
        }
        assertThat(run.reserveAt(T0, 1)).isEqualTo("reject remaining=0 retry=6000000 reset=6000000");
        assertThat(run.state).isEqualTo(new State(5000, T0));
        // the essay's example: 2.5 s later 2500 has leaked
        assertThat(run.reserveAt(T0 + 2_500_000, 1)).isEqualTo("allow wait=3500000 remaining=1 reset=4500000");
        assertThat(run.tryAt(T0 + 2_500_000, 1)).isEqualTo("reject remaining=1 retry=4500000 reset=4500000");
    }

    /**
     * nginx.com/blog/rate-limiting-nginx: rate=10r/s, {@code burst=20}: "if 21 requests arrive from a given IP
     * address simultaneously, NGINX forwards the first one to the upstream server group immediately and puts
     * the remaining 20 in the queue. It then forwards a queued request every 100 milliseconds, and returns
     * 503 to the client only if an incoming request makes the number of queued requests go over 20."
     */
    @Test
    void nginxBlogBurstQueue() {
        BucketRun<State> run = new BucketRun<>(leaky(10, Duration.ofSeconds(1), 20, false, 0));
        for (long k = 0; k < 21; k++) {
            Step<State> step = run.request(T0, 1, Long.MAX_VALUE);
            assertThat(step.allowed()).isTrue();
            assertThat(step.waitMicros()).isEqualTo(k * 100_000);
        }
        assertThat(run.request(T0, 1, Long.MAX_VALUE).allowed()).isFalse();
    }

    /**
     * The same blog with {@code burst=20 nodelay}: all 21 are forwarded at once and 20 slots are taken; "101
     * milliseconds after the first set of requests was forwarded another 20 requests arrive simultaneously.
     * Only 1 slot in the queue has been freed, so NGINX forwards 1 request and rejects the other 19. If instead
     * 501 milliseconds have passed before the 20 new requests arrive, 5 slots are free so NGINX forwards 5
     * requests immediately and rejects 15."
     */
    @Test
    void nginxBlogNodelay() {
        LeakyBucketAlgorithm lb = leaky(10, Duration.ofSeconds(1), 20, true, 0);
        BucketRun<State> run = new BucketRun<>(lb);
        for (int k = 0; k < 21; k++) {
            assertThat(run.request(T0, 1, 0).waitMicros()).isZero();
        }
        for (int k = 0; k < 4; k++) {
            assertThat(run.request(T0, 1, 0).allowed()).isFalse();
        }
        State afterBurst = run.state;
        assertThat(admittedOf(lb, afterBurst, T0 + 101_000, 20)).isEqualTo(1);
        assertThat(admittedOf(lb, afterBurst, T0 + 501_000, 20)).isEqualTo(5);
    }

    private static long admittedOf(LeakyBucketAlgorithm lb, State state, long now, int requests) {
        BucketRun<State> run = new BucketRun<>(lb);
        run.state = state;
        long admitted = 0;
        for (int k = 0; k < requests; k++) {
            Step<State> step = run.request(now, 1, 0);
            assertThat(step.waitMicros()).isZero();
            admitted += step.allowed() ? 1 : 0;
        }
        return admitted;
    }

    /**
     * The blog's two-stage limiting, rate=5r/s {@code burst=12 delay=8}: the first 8 excess requests pass
     * without delay, the next 4 (burst − delay) are delayed to keep 5 r/s, and further ones are rejected. The
     * blog counts excess requests: with a new key the very first request is free, so 9 pass undelayed.
     */
    @Test
    void nginxBlogTwoStageDelay() {
        LeakyBucketAlgorithm lb = leaky(5, Duration.ofSeconds(1), 12, false, 8);
        BucketRun<State> run = new BucketRun<>(lb);
        for (long k = 1; k <= 9; k++) {
            assertThat(run.reserveAt(T0, 1))
                    .isEqualTo("allow wait=0 remaining=" + (13 - k) + " reset=" + k * 200_000);
        }
        for (long k = 10; k <= 13; k++) {
            assertThat(run.reserveAt(T0, 1)).isEqualTo("allow wait=" + (k - 9) * 200_000 + " remaining=" + (13 - k)
                    + " reset=" + k * 200_000);
        }
        assertThat(run.reserveAt(T0, 1)).isEqualTo("reject remaining=0 retry=1000000 reset=2600000");

        // tryAcquire admits only the undelayed ones; the 10th waits 200 ms for a free pass
        BucketRun<State> tries = new BucketRun<>(lb);
        for (int k = 1; k <= 9; k++) {
            assertThat(tries.request(T0, 1, 0).allowed()).isTrue();
        }
        assertThat(tries.tryAt(T0, 1)).isEqualTo("reject remaining=4 retry=200000 reset=1800000");
        assertThat(tries.tryAt(T0 + 200_000, 1)).isEqualTo("allow wait=0 remaining=4 reset=1800000");
        assertThat(lb.grantable(null, T0, 100)).isEqualTo(9);
        assertThat(lb.grantable(tries.state, T0 + 200_000, 100)).isZero();
        assertThat(lb.grantable(tries.state, T0 + 600_000, 100)).isEqualTo(2);
    }

    @Test
    void maxWaitBoundsTheDelay() {
        BucketRun<State> run = new BucketRun<>(leaky(1, Duration.ofSeconds(1), 5, false, 0));
        assertThat(run.tryAt(T0, 1)).isEqualTo("allow wait=0 remaining=5 reset=1000000");
        Step<State> tooLong = run.request(T0, 2, 1_999_999);
        assertThat(BucketRun.describe(tooLong)).isEqualTo("reject remaining=5 retry=" + NEVER + " reset=1000000");
        assertThat(tooLong.rejected()).isSameAs(run.state);
        assertThat(BucketRun.describe(run.request(T0, 2, 2 * SECOND)))
                .isEqualTo("allow wait=2000000 remaining=3 reset=3000000");
    }

    @Test
    void multiPermitRequestsOnANewKey() {
        // every permit after the first is excess: with delay=0 a try for 2 can never pass
        LeakyBucketAlgorithm lb = leaky(1, Duration.ofSeconds(1), 5, false, 0);
        assertThat(BucketRun.describe(lb.step(null, T0, 2, 0))).isEqualTo("reject remaining=6 retry=" + NEVER + " reset=0");
        assertThat(BucketRun.describe(lb.step(null, T0, 2, Long.MAX_VALUE)))
                .isEqualTo("allow wait=1000000 remaining=4 reset=2000000");
        assertThat(BucketRun.describe(lb.step(null, T0, 6, Long.MAX_VALUE)))
                .isEqualTo("allow wait=5000000 remaining=0 reset=6000000");
        assertThat(BucketRun.describe(lb.step(null, T0, 0, 0))).isEqualTo("allow wait=0 remaining=6 reset=0");
    }

    @Test
    void microsecondsAreFinerThanNginxMilliseconds() {
        // 1000 per µs: a wait floors to 0 up to 999 milli-requests above the delay threshold
        LeakyBucketAlgorithm lb = leaky(1_000, Duration.ofNanos(1_000), 5_000, false, 0);
        BucketRun<State> run = new BucketRun<>(lb);
        assertThat(run.tryAt(T0, 1_000)).isEqualTo("allow wait=0 remaining=4001 reset=1");
        assertThat(run.tryAt(T0, 1)).isEqualTo("reject remaining=4001 retry=1 reset=1");
        assertThat(run.reserveAt(T0, 1)).isEqualTo("allow wait=1 remaining=4000 reset=2");
    }

    @Test
    void aDrainedKeyIsNotANewKeyUntilOneMoreIntervalPassed() {
        LeakyBucketAlgorithm lb = leaky(10, Duration.ofSeconds(1), 5, false, 0);
        State drained = new State(0, T0);
        assertThat(BucketRun.describe(lb.step(drained, T0, 1, Long.MAX_VALUE)))
                .isEqualTo("allow wait=100000 remaining=4 reset=200000");
        assertThat(BucketRun.describe(lb.step(null, T0, 1, Long.MAX_VALUE)))
                .isEqualTo("allow wait=0 remaining=5 reset=100000");
        assertThat(lb.expiresAt(drained)).isEqualTo(T0 + 100_000);

        State queued = new State(3000, T0);
        assertThat(lb.expiresAt(queued)).isEqualTo(T0 + 400_000);
        assertThat(lb.step(queued, T0 + 399_999, 0, 0).remaining()).isEqualTo(5);
        for (long permits = 0; permits <= 6; permits++) {
            Step<State> kept = lb.step(queued, T0 + 400_000, permits, Long.MAX_VALUE);
            Step<State> fresh = lb.step(null, T0 + 400_000, permits, Long.MAX_VALUE);
            assertThat(BucketRun.decision(kept)).isEqualTo(BucketRun.decision(fresh));
            if (permits > 0) {
                assertThat(kept.admitted()).isEqualTo(fresh.admitted());
            }
        }
    }

    @Test
    void lastMovesOnlyWhenTimeMovedForward() {
        // 1 request per 3 s, nodelay: 1 milli-request leaks every 3 ms
        LeakyBucketAlgorithm lb = leaky(1, Duration.ofSeconds(3), 10, true, 0);
        BucketRun<State> run = new BucketRun<>(lb);
        run.tryAt(T0, 1);
        run.tryAt(T0 + 2_000, 1);
        assertThat(run.state).isEqualTo(new State(1000, T0 + 2_000)); // 0.67 milli of leak discarded
        run.tryAt(T0 + 4_000, 1);
        assertThat(run.state).isEqualTo(new State(2000, T0 + 4_000));
        // one request after the same 4 ms would have leaked 1
        assertThat(lb.step(new State(1000, T0), T0 + 4_000, 1, 0).admitted()).isEqualTo(new State(1999, T0 + 4_000));
        // the clock went back: no leak, and `last` stays ahead so the interval is not leaked twice
        run.tryAt(T0 + 1_000, 1);
        assertThat(run.state).isEqualTo(new State(3000, T0 + 4_000));
        // a peek writes nothing, so it discards nothing
        assertThat(lb.step(run.state, T0 + 5_000, 0, 0).admitted()).isSameAs(run.state);
    }

    @Test
    void clockBoundaries() {
        LeakyBucketAlgorithm lb = leaky(10, Duration.ofSeconds(1), 5, false, 0);
        Step<State> first = lb.step(null, 0, 1, 0);
        assertThat(BucketRun.describe(first)).isEqualTo("allow wait=0 remaining=5 reset=100000");
        assertThat(first.admitted()).isEqualTo(new State(0, 0));
        Step<State> last = lb.step(null, Arith.MAX_TIME, 1, 0);
        assertThat(BucketRun.describe(last)).isEqualTo("allow wait=0 remaining=5 reset=" + NEVER);
        assertThat(lb.expiresAt(last.admitted())).isEqualTo(NEVER);
        // a delayed admission would be used after the end of the clock
        assertThat(lb.step(last.admitted(), Arith.MAX_TIME, 1, Long.MAX_VALUE).allowed()).isFalse();
    }

    @Test
    void maxCounts() {
        long maxPermits = 1_000_000_000L + 1;
        LeakyBucketAlgorithm perSecond = leaky(1, Duration.ofSeconds(1), 1_000_000_000L, false, 0);
        assertThat(BucketRun.describe(perSecond.step(null, 0, maxPermits, Long.MAX_VALUE)))
                .isEqualTo("allow wait=1000000000000000 remaining=0 reset=1000000001000000");
        LeakyBucketAlgorithm perYear = leaky(1, Limit.MAX_DURATION, 1_000_000_000L, false, 0);
        assertThat(BucketRun.describe(perYear.step(null, 0, maxPermits, Long.MAX_VALUE)))
                .isEqualTo("reject remaining=" + maxPermits + " retry=" + NEVER + " reset=0");
        LeakyBucketAlgorithm fastest = leaky(1_000_000_000L, Duration.ofNanos(1_000), 1_000_000_000L, true, 0);
        assertThat(BucketRun.describe(fastest.step(null, T0, maxPermits, 0)))
                .isEqualTo("allow wait=0 remaining=0 reset=2");
        assertThat(perYear.expiresAt(new State(1_000_000_000_000L, 0))).isEqualTo(NEVER);
    }

    @Test
    void migrateKeepsExcessAndLastAndTheNewRateLeaksFromLast() {
        LeakyBucket before = new LeakyBucket("lb", 1, Duration.ofSeconds(1), 5, false, 0);
        LeakyBucketAlgorithm faster = leaky(10, Duration.ofSeconds(1), 5, false, 0);
        State state = new State(5000, T0);
        State migrated = faster.migrate(state, before, T0 + 100_000);
        assertThat(migrated).isSameAs(state);
        assertThat(faster.step(migrated, T0 + 100_000, 1, Long.MAX_VALUE).admitted()).isEqualTo(new State(5000, T0 + 100_000));
        // a smaller burst rejects until the excess has leaked below it
        LeakyBucketAlgorithm smaller = leaky(1, Duration.ofSeconds(1), 2, false, 0);
        assertThat(BucketRun.describe(smaller.step(state, T0, 1, Long.MAX_VALUE)))
                .isEqualTo("reject remaining=0 retry=6000000 reset=6000000");
        assertThat(smaller.step(state, T0 + 4 * SECOND, 1, Long.MAX_VALUE).allowed()).isTrue();
        assertThat(Algorithms.of(before)).isInstanceOf(LeakyBucketAlgorithm.class);
    }
}
