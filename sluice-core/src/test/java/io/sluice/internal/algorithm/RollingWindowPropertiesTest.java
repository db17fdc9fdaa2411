package io.sluice.internal.algorithm;

import static io.sluice.internal.algorithm.WindowAlgorithmsSupport.micros;
import static io.sluice.internal.algorithm.WindowAlgorithmsSupport.ops;
import static io.sluice.internal.algorithm.WindowAlgorithmsSupport.run;
import static io.sluice.internal.algorithm.WindowAlgorithmsSupport.scenarios;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Limit;
import io.sluice.RollingWindow;
import io.sluice.internal.algorithm.RollingWindowAlgorithm.State;
import io.sluice.internal.algorithm.WindowAlgorithmsSupport.Event;
import io.sluice.internal.algorithm.WindowAlgorithmsSupport.Scenario;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

class RollingWindowPropertiesTest {

    @Provide
    Arbitrary<Scenario<RollingWindow>> small() {
        Arbitrary<RollingWindow> limits = Combinators.combine(
                        Arbitraries.longs().between(1, 15), Arbitraries.longs().between(1, 300),
                        Arbitraries.integers().between(1, 100))
                .as((limit, window, bucketPercent) -> RollingWindow.of(limit, micros(window),
                        micros(Math.max(1, window * bucketPercent / 100))));
        return scenarios(limits, Arbitraries.longs().between(0, 5_000),
                l -> ops(Arith.micros(l.bucket()), Arith.micros(l.window()) * 2, l.limit(), 60));
    }

    @Provide
    Arbitrary<Scenario<RollingWindow>> huge() {
        long longest = Arith.micros(Limit.MAX_DURATION);
        Arbitrary<RollingWindow> limits = Combinators.combine(
                        Arbitraries.longs().between(Limit.MAX_COUNT - 3, Limit.MAX_COUNT),
                        Arbitraries.longs().between(longest - 1_000, longest),
                        Arbitraries.longs().between(1, RollingWindow.MAX_BUCKETS))
                .as((limit, window, buckets) -> RollingWindow.of(limit, micros(window),
                        micros(Arith.ceilDiv(window, buckets))));
        return scenarios(limits, Arbitraries.longs().between(Arith.MAX_TIME - 3 * longest, Arith.MAX_TIME),
                l -> ops(Arith.micros(l.window()) / 4, Arith.micros(l.window()) * 2, l.limit(), 30));
    }

    /**
     * Grants what Istio's script grants (all-or-nothing and best effort), admits at most {@code limit} within
     * any {@code W − B} of itself, never rejects what an exact log over W would admit, and keeps at most
     * {@code W/B + 1} buckets.
     */
    @Property(tries = 400)
    void matchesIstioAndStaysWithinOneBucketOfASlidingLog(@ForAll("small") Scenario<RollingWindow> s) {
        RollingWindowAlgorithm algorithm = new RollingWindowAlgorithm(s.limit());
        checkAgainstModels(algorithm, s.limit(), run(algorithm, s.start(), s.ops(), false, false));
    }

    @Property(tries = 150)
    void noOverflowNearMaxTimeWithMaxCounts(@ForAll("huge") Scenario<RollingWindow> s) {
        RollingWindowAlgorithm algorithm = new RollingWindowAlgorithm(s.limit());
        checkAgainstModels(algorithm, s.limit(), run(algorithm, s.start(), s.ops(), false, false));
    }

    @Property(tries = 200)
    void clockGoingBackwardsKeepsEverythingNonNegative(@ForAll("small") Scenario<RollingWindow> s) {
        run(new RollingWindowAlgorithm(s.limit()), s.start(), s.ops(), false, true);
    }

    private static void checkAgainstModels(RollingWindowAlgorithm algorithm, RollingWindow limit,
                                           List<Event<State>> events) {
        long window = Arith.micros(limit.window());
        long bucket = Arith.micros(limit.bucket());
        IstioRollingWindow istio = new IstioRollingWindow(limit.limit(), window, bucket);
        State state = null;
        List<long[]> admitted = new ArrayList<>();
        for (Event<State> e : events) {
            long t = e.time();
            if (state != null && t >= algorithm.expiresAt(state)) {
                state = null;
            }
            if (e.permits() > 0) {
                long granted = istio.copy().call(t, e.permits(), false);
                assertThat(e.step().allowed()).as("Istio grants %d of %d at %d", granted, e.permits(), t)
                        .isEqualTo(granted == e.permits());
                assertThat(algorithm.grantable(state, t, e.permits() * 2))
                        .isEqualTo(istio.copy().call(t, e.permits() * 2, true));
                long exactLog = permitsIn(admitted, t - window + 1, t);
                if (exactLog + e.permits() <= limit.limit()) {
                    assertThat(e.step().allowed()).as("a sliding log over W admits it").isTrue();
                }
            }
            if (e.committedAdmitted() && e.permits() > 0) {
                istio.call(t, e.permits(), false);
                admitted.add(new long[] {t, e.permits()});
                state = e.step().admitted();
                assertThat((long) state.buckets().length / 2).isLessThanOrEqualTo(Arith.ceilDiv(window, bucket));
            }
        }
        for (long[] first : admitted) {
            assertThat(permitsIn(admitted, first[0], first[0] + window - bucket))
                    .as("admitted in [%d, %d]", first[0], first[0] + window - bucket)
                    .isLessThanOrEqualTo(limit.limit());
        }
    }

    private static long permitsIn(List<long[]> events, long from, long to) {
        long sum = 0;
        for (long[] e : events) {
            if (e[0] >= from && e[0] <= to) {
                sum += e[1];
            }
        }
        return sum;
    }

    /**
     * A transcription of istio/istio mixer/adapter/redisquota/rolling_window.go (the Lua script), minus request
     * deduplication, in microseconds. The caller commits a call only when the store admits, which is Sluice's one
     * deliberate difference (rejected calls open no bucket).
     */
    private static final class IstioRollingWindow {
        private final long credit;
        private final long windowLength;
        private final long bucketLength;
        private boolean metaPresent;
        private long metaExpiresAt;
        private long token;
        private long bucketToken;
        private long bucketTimestamp;
        private List<long[]> data = new ArrayList<>(); // the sorted set: (score = bucket start, tokens)

        IstioRollingWindow(long credit, long windowLength, long bucketLength) {
            this.credit = credit;
            this.windowLength = windowLength;
            this.bucketLength = bucketLength;
        }

        IstioRollingWindow copy() {
            IstioRollingWindow c = new IstioRollingWindow(credit, windowLength, bucketLength);
            c.metaPresent = metaPresent;
            c.metaExpiresAt = metaExpiresAt;
            c.token = token;
            c.bucketToken = bucketToken;
            c.bucketTimestamp = bucketTimestamp;
            c.data = new ArrayList<>(data);
            return c;
        }

        long call(long timestamp, long requested, boolean bestEffort) {
            if (metaPresent && timestamp >= metaExpiresAt) {
                metaPresent = false; // PEXPIRE on the meta key
            }
            if (!metaPresent) {
                metaPresent = true;
                token = 0;
                bucketToken = 0;
                bucketTimestamp = timestamp;
            }
            if (timestamp - bucketTimestamp + 1 > bucketLength) {
                if (bucketToken > 0) {
                    data.add(new long[] {bucketTimestamp, bucketToken});
                }
                bucketToken = 0;
                bucketTimestamp = timestamp;
            }
            long timeToExpire = timestamp - windowLength;
            long reclaimed = 0;
            List<long[]> kept = new ArrayList<>();
            for (long[] b : data) {
                if (b[0] <= timeToExpire) {
                    reclaimed += b[1];
                } else {
                    kept.add(b);
                }
            }
            data = kept;
            if (reclaimed > 0) {
                token = Math.max(0, token - reclaimed);
            }
            metaExpiresAt = timestamp + windowLength;
            long available = credit - token;
            if (available <= 0) {
                return 0;
            }
            long granted = available >= requested ? requested : bestEffort ? available : 0;
            token += granted;
            bucketToken += granted;
            return granted;
        }
    }
}
