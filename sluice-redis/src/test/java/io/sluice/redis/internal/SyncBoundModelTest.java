package io.sluice.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.PriorityQueue;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The bound of docs/synced-mode.md on the protocol's model, in an event simulation: nodes asking at steady rates
 * with random phases, each syncing every interval with a random phase; a sync snapshots the node's admissions,
 * reaches the shared count up to R1 later and brings the count back up to R2 after that. A node admits when what
 * it last pulled plus what it admitted since plus one fits the limit. Over thousands of random fleets, what the
 * fleet admits must stay within {@code limit + the sum over all nodes but one of a(I + R1 + R2)}, {@code a(span)}
 * being the most one node admitted within any span of that length: the derivation is written out for R = 0, and
 * this checks its extension to round trips (which the fleet IT also measures on real processes).
 */
class SyncBoundModelTest {

    /**
     * One event: a node asks for a permit, snapshots its admissions for a sync (which executes at
     * {@code executeAt} and replies at {@code replyAt}), the sync executes on the shared count, or its reply
     * arrives. {@code value} is the pushed total (execute) or the shared count (reply), {@code snapshot} what
     * the node had pushed when the reply's count was read.
     */
    private record Event(double time, int kind, int node, long value, long snapshot, double executeAt,
                         double replyAt, long seq) implements Comparable<Event> {
        static final int ASK = 0;
        static final int SNAPSHOT = 1;
        static final int EXECUTE = 2;
        static final int REPLY = 3;

        @Override
        public int compareTo(Event o) {
            int c = Double.compare(time, o.time);
            return c != 0 ? c : Long.compare(seq, o.seq);
        }
    }

    @Test
    void theFleetNeverAdmitsMoreThanTheLimitPlusOneSyncSpanOfEveryNodeButOne() {
        Random random = new Random(20261124L);
        long tight = 0;
        for (int trial = 0; trial < 3_000; trial++) {
            int nodes = 2 + random.nextInt(4);
            double interval = 1.0;
            double r1 = new double[] {0, 0.05, 0.2, 0.5}[random.nextInt(4)];
            double r2 = new double[] {0, 0.05, 0.2, 0.5}[random.nextInt(4)];
            long limit = new long[] {10, 37, 200}[random.nextInt(3)];
            double[] rates = new double[nodes];
            double total = 0;
            for (int x = 0; x < nodes; x++) {
                rates[x] = new double[] {3, 10, 40}[random.nextInt(3)];
                total += rates[x];
            }
            List<List<Double>> times = simulate(random, nodes, limit, rates, interval, r1, r2, 3 * limit / total + 5);
            long admitted = times.stream().mapToLong(List::size).sum();
            long[] spans = new long[nodes];
            for (int x = 0; x < nodes; x++) {
                spans[x] = mostWithin(times.get(x), interval + r1 + r2);
            }
            Arrays.sort(spans);
            long bound = limit + Arrays.stream(spans, 1, nodes).sum();
            assertThat(admitted).as("trial %d: %d nodes at %s, limit %d, R1 %s, R2 %s", trial, nodes,
                    Arrays.toString(rates), limit, r1, r2).isLessThanOrEqualTo(bound)
                    .isLessThanOrEqualTo(nodes * limit);
            tight = Math.max(tight, admitted - limit);
        }
        assertThat(tight).as("the fleets did overshoot: the check is not vacuous").isPositive();
    }

    /** Each node's admission times, over one window that never ends (the limit never comes back). */
    private static List<List<Double>> simulate(Random random, int nodes, long limit, double[] rates, double interval,
                                               double r1, double r2, double until) {
        PriorityQueue<Event> events = new PriorityQueue<>();
        long seq = 0;
        for (int x = 0; x < nodes; x++) {
            for (double t = random.nextDouble() / rates[x]; t < until; t += 1 / rates[x]) {
                events.add(new Event(t, Event.ASK, x, 0, 0, 0, 0, seq++));
            }
            for (double t = random.nextDouble() * interval; t < until; t += interval) {
                double execute = t + random.nextDouble() * r1;
                events.add(new Event(t, Event.SNAPSHOT, x, 0, 0, execute, execute + random.nextDouble() * r2, seq++));
            }
        }
        long shared = 0;
        long[] own = new long[nodes];
        long[] pushed = new long[nodes];
        long[] view = new long[nodes];
        long[] viewHolds = new long[nodes];
        List<List<Double>> times = new ArrayList<>();
        for (int x = 0; x < nodes; x++) {
            times.add(new ArrayList<>());
        }
        while (!events.isEmpty()) {
            Event e = events.poll();
            int x = e.node();
            switch (e.kind()) {
                case Event.ASK -> {
                    if (view[x] + own[x] - viewHolds[x] + 1 <= limit) {
                        own[x]++;
                        times.get(x).add(e.time());
                    }
                }
                case Event.SNAPSHOT -> events.add(new Event(e.executeAt(), Event.EXECUTE, x, own[x], 0, 0, e.replyAt(),
                        seq++));
                case Event.EXECUTE -> {
                    // Totals, as the script takes them: only what the node had not pushed yet is added.
                    shared += Math.max(0, e.value() - pushed[x]);
                    pushed[x] = Math.max(pushed[x], e.value());
                    events.add(new Event(e.replyAt(), Event.REPLY, x, shared, e.value(), 0, 0, seq++));
                }
                default -> {
                    if (e.snapshot() >= viewHolds[x]) {
                        view[x] = e.value();
                        viewHolds[x] = e.snapshot();
                    }
                }
            }
        }
        return times;
    }

    /** The most times within any closed span of length {@code span}. */
    private static long mostWithin(List<Double> times, double span) {
        long best = 0;
        int from = 0;
        for (int to = 0; to < times.size(); to++) {
            while (times.get(to) - times.get(from) > span) {
                from++;
            }
            best = Math.max(best, to - from + 1);
        }
        return best;
    }
}
