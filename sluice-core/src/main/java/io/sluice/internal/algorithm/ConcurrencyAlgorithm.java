package io.sluice.internal.algorithm;

import io.sluice.Concurrency;
import io.sluice.Limit;
import java.util.Arrays;

/**
 * {@code concurrency}: at most {@code maxConcurrent} permits in flight per key, each held by an expiring lease
 * (Stripe's concurrent requests limiter, described in "Scaling your API with rate limiters", 2017: requests in
 * progress are tracked per key, and an entry whose holder never reports back is dropped after a TTL).
 *
 * <h2>Model</h2>
 *
 * A lease is {@code (id, permits, expiresAt)}. A request for {@code p} permits at {@code now} is admitted when
 * the permits of the live leases ({@code expiresAt > now}) plus {@code p} are at most {@code maxConcurrent};
 * it then holds a new lease expiring at {@code now + leaseTtl}. {@link #release} removes a live lease; a
 * lease that is never released (its holder crashed) stops counting when it expires, so a crash costs at most
 * one TTL of capacity.
 *
 * <pre>
 *   maxConcurrent 2, ttl 30 s
 *   t=  0 s  +1  lease 0 s    (id = now)            in flight 1
 *   t=  0 s  +1  lease 0 s+1µs (id = previous + 1)   in flight 2
 *   t=  5 s  +1  rejected, retry after 25 s (lease 0 s expires at 30 s)
 *   t=  6 s  release(id 0 s)  → released            in flight 1
 *   t=  7 s  +1  lease 7 s                           in flight 2
 *
 *   0 s         6 s  7 s                   30 s        37 s
 *   [== lease A ==)                                             released at 6 s
 *   [============ lease B =====================)                expires at 30 s
 *                    [============ lease C ==================)  expires at 37 s
 * </pre>
 *
 * <h2>Lease ids</h2>
 *
 * {@code id = max(lastId + 1, now)}, with {@code lastId} kept in the state. Ids of one state strictly
 * increase. Without a global counter they must also stay unique after the state is dropped: a stale holder
 * calling {@code release} with an old id must never free somebody else's lease. Ids normally track the clock,
 * but they can run ahead of it (many grants, or grant-release cycles, within one microsecond), so the state is
 * kept until {@code lastId + 1} as well as until its last lease expires: {@link #expiresAt} is
 * {@code max(latest expiry, lastId + 1)}. After that, {@code now > lastId}, so {@code max(lastId + 1, now) =
 * now}, which is what no state gives; every id handed out later is at least that {@code now}, above all
 * earlier ids. (This relies on the clock not going back past {@code lastId} after the state is gone; with the
 * state present, a clock going backwards cannot repeat an id.)
 *
 * <p>Ids stay below 2^53 ({@link Arith#MAX_TIME}), so that every id, and {@code lastId + 1}, is an exact
 * integer in a double (a Lua number): at {@code lastId = 2^53} the next id, {@code 2^53 + 1}, would round back
 * to {@code 2^53} and be handed out twice, and a stale {@code release(2^53 + 1)} would read as {@code 2^53}.
 * When the next id would be {@code 2^53} or more (a request at {@code now = MAX_TIME}, or ids that ran ahead
 * of the clock to its very end), no lease can be handed out any more: a request is rejected with
 * {@code retryAfter = }{@link Arith#NEVER} and {@code remaining = 0}, as time cannot pass {@code MAX_TIME};
 * so is one that would have to wait for capacity until {@code MAX_TIME}. That is the year 2255.
 *
 * <h2>Decision</h2>
 *
 * <ul>
 *   <li>{@code remaining = max(0, maxConcurrent − in flight)} after the decision (a lowered maximum can leave
 *       more in flight than allowed: nothing is admitted until enough leases end).
 *   <li>{@code retryAfter}: leases sorted by expiry are let go one by one until {@code p} fit; the wait is until
 *       the last of them expires. Exact, as only releases (which count as something else happening) or
 *       expiry free capacity.
 *   <li>{@code resetAfter}: until the last live lease expires, when all capacity is back.
 *   <li>{@code permits == 0}: a pure inspection, admitted, no lease ({@code lease = -1}), state unchanged.
 * </ul>
 * A lease is live while {@code now < expiresAt}; there is no elapsed-time arithmetic, so a clock that goes
 * backwards simply sees leases live a little longer.
 *
 * <h2>State and arithmetic</h2>
 *
 * {@code (lastId, leases)} with {@code leases} = triples {@code (id, permits, expiresAt)} in grant order, only
 * live ones after a write, so at most {@code maxConcurrent <= 10^6} of them and their permits sum to at most
 * {@code 10^6}. {@code expiresAt = now + ttl} exceeds 2^53 for leases granted within one TTL of
 * {@link Arith#MAX_TIME} (after the year 2254); a Lua port that stores it as a double would round such a value
 * to an even microsecond, so it should store it as a string or compare {@code now − ttl} instead.
 *
 * <h2>Deliberate differences from Stripe</h2>
 *
 * Stripe tracks one entry per request under an id the caller supplies; here a lease carries permits and its
 * own expiry (a TTL change applies to new leases only), and the limiter hands out the ids, ordered per key.
 */
final class ConcurrencyAlgorithm implements Algorithm<ConcurrencyAlgorithm.State> {

    private static final int LEASE = 3;

    /**
     * @param lastId the latest lease id handed out for this key
     * @param leases triples {@code (id, permits, expiresAt)} in grant order
     */
    record State(long lastId, long[] leases) {
        @Override
        public boolean equals(Object o) {
            return o instanceof State s && lastId == s.lastId && Arrays.equals(leases, s.leases);
        }

        @Override
        public int hashCode() {
            return 31 * Long.hashCode(lastId) + Arrays.hashCode(leases);
        }

        @Override
        public String toString() {
            return "State[lastId=" + lastId + ", leases=" + Arrays.toString(leases) + "]";
        }
    }

    private static final long[] EMPTY = {};

    /** The largest lease id: see the essay, "Ids stay below 2^53". */
    private static final long LAST_ID = Arith.MAX_TIME - 1;

    private final Concurrency limit;
    private final long ttl;

    ConcurrencyAlgorithm(Concurrency limit) {
        this.limit = limit;
        this.ttl = Arith.micros(limit.leaseTtl());
    }

    @Override
    public Limit limit() {
        return limit;
    }

    @Override
    public Step<State> step(State state, long now, long permits, long maxWaitMicros) {
        long[] live = live(state, now);
        long inFlight = total(live);
        long id = nextId(state, now);
        if (permits == 0) {
            return Step.allow(0, available(inFlight, id), resetAfter(live, now), state, state);
        }
        if (id > LAST_ID) {
            // Out of ids for good: time cannot pass MAX_TIME, so no wait helps.
            return Step.reject(0, Arith.NEVER, resetAfter(live, now), state);
        }
        if (inFlight + permits > limit.maxConcurrent()) {
            return Step.reject(remaining(inFlight), retryAfter(live, now, inFlight, permits),
                    resetAfter(live, now), state);
        }
        long[] leases = Arrays.copyOf(live, live.length + LEASE);
        leases[live.length] = id;
        leases[live.length + 1] = permits;
        leases[live.length + 2] = now + ttl;
        return new Step<>(true, 0, remaining(inFlight + permits), 0, resetAfter(leases, now),
                new State(id, leases), state, id);
    }

    @Override
    public long grantable(State state, long now, long permits) {
        long inFlight = total(live(state, now));
        return Math.min(permits, available(inFlight, nextId(state, now)));
    }

    @Override
    public long expiresAt(State state) {
        long latest = state.lastId() + 1;
        for (int i = 2; i < state.leases().length; i += LEASE) {
            latest = Math.max(latest, state.leases()[i]);
        }
        return latest;
    }

    /** Keeps the leases in flight; a new maximum judges them at once, a new TTL applies to new leases. */
    @Override
    public State migrate(State state, Limit previous, long now) {
        if (!(previous instanceof Concurrency)) {
            throw new IllegalArgumentException("previous must be a Concurrency, was " + previous);
        }
        return state;
    }

    @Override
    public Release<State> release(State state, long now, long lease) {
        long[] live = live(state, now);
        int at = indexOf(live, lease);
        if (at < 0) {
            return new Release<>(false, state);
        }
        long[] kept = new long[live.length - LEASE];
        System.arraycopy(live, 0, kept, 0, at);
        System.arraycopy(live, at + LEASE, kept, at, live.length - at - LEASE);
        State after = new State(state.lastId(), kept);
        return new Release<>(true, expiresAt(after) <= now ? null : after);
    }

    /**
     * Lets leases go, earliest expiry first, until {@code permits} fit; waits for the last one let go, unless
     * that is too late to get an id.
     */
    private long retryAfter(long[] live, long now, long inFlight, long permits) {
        int n = live.length / LEASE;
        long[][] byExpiry = new long[n][];
        for (int i = 0; i < n; i++) {
            byExpiry[i] = new long[] {live[i * LEASE + 2], live[i * LEASE + 1]};
        }
        Arrays.sort(byExpiry, (a, b) -> Long.compare(a[0], b[0]));
        long excess = inFlight + permits - limit.maxConcurrent();
        int i = 0;
        while (byExpiry[i][1] < excess) {
            excess -= byExpiry[i][1];
            i++;
        }
        long wait = byExpiry[i][0] - now;
        // From MAX_TIME on no id is left (the state's ids are below it: this step found one).
        return wait > LAST_ID - now ? Arith.NEVER : wait;
    }

    private long remaining(long inFlight) {
        return Math.max(0, limit.maxConcurrent() - inFlight);
    }

    /** What a request could take now: nothing once the ids are used up. */
    private long available(long inFlight, long nextId) {
        return nextId > LAST_ID ? 0 : remaining(inFlight);
    }

    /** The id the next lease would get: at least {@code now}, above every id of the state. */
    private static long nextId(State state, long now) {
        return state == null ? now : Math.max(state.lastId() + 1, now);
    }

    private static long resetAfter(long[] leases, long now) {
        long latest = now;
        for (int i = 2; i < leases.length; i += LEASE) {
            latest = Math.max(latest, leases[i]);
        }
        return latest - now;
    }

    /** The leases with {@code expiresAt > now}. */
    private static long[] live(State state, long now) {
        if (state == null) {
            return EMPTY;
        }
        long[] leases = state.leases();
        long[] kept = new long[leases.length];
        int n = 0;
        for (int i = 0; i < leases.length; i += LEASE) {
            if (leases[i + 2] > now) {
                System.arraycopy(leases, i, kept, n, LEASE);
                n += LEASE;
            }
        }
        return n == leases.length ? leases : Arrays.copyOf(kept, n);
    }

    private static int indexOf(long[] leases, long id) {
        for (int i = 0; i < leases.length; i += LEASE) {
            if (leases[i] == id) {
                return i;
            }
        }
        return -1;
    }

    private static long total(long[] leases) {
        long sum = 0;
        for (int i = 1; i < leases.length; i += LEASE) {
            sum += leases[i];
        }
        return sum;
    }
}
