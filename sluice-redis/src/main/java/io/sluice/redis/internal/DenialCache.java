package io.sluice.redis.internal;

import io.sluice.Concurrency;
import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.Limit;
import io.sluice.Mode;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.SlidingLog;
import io.sluice.TokenBucket;
import io.sluice.internal.algorithm.Arith;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/*
 * Cached denials: a process that has just learned from Redis that a key denies a request answers the same
 * request itself, without a round trip, for exactly as long as Redis would deny it too.
 *
 * Why it is exact. Redis answers "denied, retry after r" to a try for p permits, evaluated at Redis time T. Every
 * algorithm's retry-after is the SMALLEST wait after which the same permits would pass as a try if nothing else
 * happened (Step.retryAfterMicros; each algorithm's essay derives it, and TransitionPortsIT pins the Lua to the
 * Java). Suppose further that, for this rule,
 *   (a) other callers can only make the key less permissive: admissions consume, nothing gives back;
 *   (b) time only makes it more permissive,
 * then every try for p permits is denied at every Redis time in [T, T + r). The process reads its own clock at
 * S just before it sends the call, so S ≤ T in real time, and it keeps the denial until the deadline S + r ≤ T + r,
 * measured with relative durations on its own clock, so the skew between the hosts' clocks does not matter
 * (their rate difference, a few ppm, does not either at these durations). A cached answer is given at a local time
 * t ≥ S (the reply has arrived, so also t ≥ T in real time) and t < S + r ≤ T + r: Redis, asked at t, would deny
 * the same request, so the cached denial is the answer Redis would give at an instant inside the call. That is
 * "never more permissive" (it only ever denies) and "never more restrictive" (Redis would deny too). With a
 * client clock (RedisStore.Builder.clock) the script's time is that clock's reading, S = T, and the cached
 * answer is the one Redis would give to the letter, retry-after included; RedisDenialCacheIT drives a store with
 * and one without the cache through the same random requests and compares every decision.
 *
 * The answer. A cached denial carries the deciding limit and the remaining count Redis reported, retry-after
 * deadline − now (what Redis would report at now if nothing else happened) and reset-after less the time
 * elapsed since S. Its source is Decision.Source.CACHED. Only a try for exactly the permits denied is answered:
 * one for more permits is denied too but has a longer retry-after, one for fewer may pass. What can differ from
 * a fresh answer: remaining is the count at the denial (time may have refilled some since, other callers taken
 * some); other callers' admissions since can only make the true retry-after longer than the cached one (so a
 * client retries early and asks again, never late); and for a rule of several limits, Redis reports for a
 * limit that would admit the remaining count and reset-after it would leave if charged at that instant, which
 * moves with time and which the cache does not know. Every admission decided through this store drops the
 * key's entry, so within one process the retry-after is exact.
 *
 * Where it applies (eligible()): exact mode, tries (all or nothing, no wait) for exactly the permits denied, a
 * rule with no concurrency limit, no count_rejected and no token bucket that starts below capacity. The eleven
 * algorithms:
 *   token_bucket       yes, when initial_tokens = capacity: other callers take tokens, refill only adds; r = time
 *                      until the deficit is refilled (greedy: least w with a·w + roundingError ≥ deficit·b;
 *                      interval: the period end that covers it).
 *                      NO with initial_tokens < capacity: left out, the safe side. (It was wrong when a denial
 *                      wrote nothing and a key without state started at initial_tokens whenever asked, so a key
 *                      never admitted did not open with time, whatever r said; RedisDenialCacheIT found it. A
 *                      denial now creates the bucket, which may make it eligible, untested.)
 *   gcra               yes: denial means TAT + p·T − B > now; admissions push TAT later; r = allow_at − now.
 *   fixed_window       yes without count_rejected: the counter never drops inside a window, r = window end − now.
 *   calendar_window    yes, as fixed_window: r = the window's (calendar) end − now.
 *   sliding_window     yes: the weighted estimate only decays with time (the essay's "exact smallest wait").
 *   sliding_log        yes without count_rejected: entries leave only by age; min_gap ends only by age, and a
 *                      newer admission moves it later.
 *   rolling_window     yes: buckets leave only by age; r = when enough of the oldest have left.
 *   leaky_bucket       yes: a try is denied while the request would have to be delayed; the excess only leaks
 *                      with time and admissions add to it (an admission's truncated leak makes it stricter).
 *   smooth_bursty      yes: a try is denied iff the next free ticket is in the future; it only moves forward,
 *   smooth_warming_up  whatever the permits; r = ticket − now.
 *   refresh_period     yes: permits come back only at cycle starts; r = the first cycle start that admits.
 *   concurrency        NO: a release frees a permit at any moment, long before the earliest lease expires.
 * A rule containing a concurrency limit is skipped as a whole: its retry-after may be the concurrency limit's.
 * For a rule of several limits the denial's retry-after is the longest of its rejecting limits', and that
 * limit alone keeps the rule denied until then.
 *
 * Where it does not apply, and why:
 *   - token_bucket with initial_tokens < capacity (above).
 *   - count_rejected (fixed_window, sliding_log): Redis charges every rejected attempt; a local answer would skip
 *     that charge and leave Redis in another state than the one without the cache.
 *   - concurrency: release opens the key (above).
 *   - reserve, acquire, best-effort tries and peeks go to Redis: a denied try says nothing about a reservation
 *     that may wait, or a partial grant. Tries for other permit counts go to Redis too, and so do batches
 *     (decideAll).
 *   - coalesced mode decides queued requests in one call and keeps the queue's order; leased and synced modes
 *     decide from their own local state (leases, synced totals), which can give permits back: none of them
 *     consults this cache.
 *   - reset through this store forgets the key here (and no denial in flight during a reset is recorded). A
 *     rule change (RateLimiter.updateLimit, a rule reload) compiles a new RedisRule; an entry answers only for
 *     the compiled rule it was learned under.
 *   - outside this process: a reset by another process or store, a DEL or FLUSH by hand, a Redis eviction under
 *     maxmemory, a failover to a replica that missed writes, or a step of Redis's clock can open a key earlier
 *     than this process can know. This process then keeps denying that key until the cached deadline, at most
 *     the retry-after Redis gave and never more than MAX_HOLD_MICROS (1 s) after the call that learned it. RedisStore.Builder.cacheDenials(false) turns the cache off for deployments
 *     where that matters.
 *
 * Memory and cost. A fixed array of SLOTS entries, indexed by a seeded hash of (rule name, key): a lookup is
 * one array read and a few comparisons, recording is one array write, no lock, no resize, no sweep. A new denial
 * replaces whatever occupied its slot; an entry past its deadline is simply ignored until overwritten. So a flood
 * of distinct denied keys costs at most SLOTS entries (about 1 MB, plus the key strings they hold) and evicts
 * other keys' denials, which then go to Redis again: less caching, never a wrong answer. A crafted collision
 * (keys with equal String.hashCode) can only do the same.
 *
 * Thread safety: all methods may be called from any thread; a slot holds an immutable entry.
 */

/** Denials learned from Redis, answered locally while Redis would still deny; see the comment above. */
final class DenialCache {

    /** Entries held at most (a power of two). */
    static final int SLOTS = 8192;

    /**
     * How long one denial is answered here at most, however long its retry-after: what opens a key outside this
     * process (a reset elsewhere, a flushed or restarted Redis, a failover that lost writes) is seen within this
     * time, at the cost of one call to Redis per denied key per second and process.
     */
    static final long MAX_HOLD_MICROS = 1_000_000;

    /**
     * One denial: learned under {@code rule} for {@code key}, for a try of {@code permits}, sent at {@code sentAt},
     * denied until {@code deadline} and answered here while the clock reads less than {@code answerUntil} (the
     * deadline, or {@link #MAX_HOLD_MICROS} after sending if sooner).
     */
    private record Entry(RedisRule rule, String key, long permits, long sentAt, long deadline, long answerUntil,
                         Decision decision) {}

    private final AtomicReferenceArray<Entry> slots = new AtomicReferenceArray<>(SLOTS);
    private final LongSupplier clock;
    private final int seed = ThreadLocalRandom.current().nextInt() | 1;
    /** Bumped by every reset: a call sent before a reset may carry a denial the reset cancelled. */
    private final AtomicLong resets = new AtomicLong();
    private final LongAdder answered = new LongAdder();

    /** @param clock microseconds on a clock that never goes back while the store lives, or the store's client clock */
    DenialCache(LongSupplier clock) {
        this.clock = clock;
    }

    /**
     * The cache a store with {@code settings} uses, or null when it caches no denials. With a client clock the
     * script decides at that clock's reading, so the cache counts on it too; else on the monotonic system clock,
     * in durations only: Redis's clock and this host's never need to agree.
     */
    static DenialCache of(StoreSettings settings) {
        if (!settings.cacheDenials()) {
            return null;
        }
        return new DenialCache((settings.clock() != null ? settings.clock() : io.sluice.Clock.system())::nowMicros);
    }

    /**
     * Whether denials under {@code rule} may be cached and answered: exact mode and neither a concurrency limit nor
     * a count_rejected limit (see the comment above). Of its requests, only tries are answered and recorded.
     */
    static boolean eligible(Rule rule) {
        if (rule.mode().kind() != Mode.Kind.EXACT || !rule.shadow().isEmpty()) {
            return false;   // shadow limits: a repeated denial would not say what they would have done
        }
        if (rule.lockout() != null) {
            return false;   // every rejection counts towards the lockout: each must reach Redis
        }
        for (Limit limit : rule.limits()) {
            if (limit instanceof Concurrency
                    || limit instanceof FixedWindow f && f.countRejected()
                    || limit instanceof SlidingLog s && s.countRejected()
                    || limit instanceof TokenBucket t && t.initialTokens() < t.capacity()) {
                return false;
            }
        }
        return true;
    }

    /** What to pass to {@link #record}: the time and the reset count, read just before the call is sent. */
    record Sent(long at, long resets) {}

    /** Reads the clock and the reset count; call it before sending the call whose reply is recorded. */
    Sent sending() {
        // The reset count first: a reset that lands after it makes record() skip the reply.
        long r = resets.get();
        return new Sent(clock.getAsLong(), r);
    }

    /**
     * The cached denial of a try for {@code permits} of {@code key} under {@code rule}, or null to ask Redis. Only a
     * try for exactly the permits denied is answered: one for more is denied too, but with a longer retry-after
     * than the cache knows, and one for fewer may pass.
     */
    Decision lookup(RedisRule rule, String key, long permits) {
        int slot = slot(rule.rule().name(), key);
        Entry e = slots.get(slot);
        if (e == null || e.rule() != rule || permits != e.permits() || !e.key().equals(key)) {
            return null;
        }
        long now = clock.getAsLong();
        if (now < e.sentAt() || now >= e.answerUntil()) {
            return null;
        }
        Decision d = e.decision();
        long elapsed = now - e.sentAt();
        long reset = d.resetAfterMicros() == Long.MAX_VALUE ? Long.MAX_VALUE
                : Math.max(0, d.resetAfterMicros() - elapsed);
        answered.increment();
        return new Decision(false, 0, d.remaining(), e.deadline() - now, reset, 0, d.limit(), Decision.NO_LEASE,
                Decision.Source.CACHED);
    }

    /**
     * Learns from Redis's answer {@code d} to {@code request} sent at {@code sent}. A denied try with a finite
     * retry-after is kept until {@code sent.at + retryAfter}. Any admission (a try, a partial grant, a reservation,
     * a peek that passes) sent after the kept denial was sent drops it: it charged the key, so the denial's
     * retry-after may now be too short, or it shows the key open (a reset elsewhere).
     */
    void record(RedisRule rule, String key, Request request, Sent sent, Decision d) {
        if (d.source() != Decision.Source.STORE || resets.get() != sent.resets()) {
            return;
        }
        int slot = slot(rule.rule().name(), key);
        if (d.allowed()) {
            Entry e = slots.get(slot);
            if (e != null && e.sentAt() <= sent.at() && e.key().equals(key)) {
                slots.compareAndSet(slot, e, null);
            }
            return;
        }
        if (request.op() != Request.Op.TRY) {
            return;
        }
        long permits = request.permits();
        long retry = d.retryAfterMicros();
        if (retry <= 0 || retry > Arith.MAX_TIME) {
            return;     // nothing to wait for, or "never": only something other than time opens the key
        }
        slots.set(slot, new Entry(rule, key, permits, sent.at(), sent.at() + retry,
                sent.at() + Math.min(retry, MAX_HOLD_MICROS), d));
    }

    /** Forgets the denial of {@code key} under any version of the rule named {@code ruleName}: a reset. */
    void forget(String ruleName, String key) {
        resets.incrementAndGet();
        int slot = slot(ruleName, key);
        Entry e = slots.get(slot);
        if (e != null && e.key().equals(key) && e.rule().rule().name().equals(ruleName)) {
            slots.compareAndSet(slot, e, null);
        }
    }

    /** Tries answered from the cache since the store was built. */
    long answered() {
        return answered.sum();
    }

    /** Entries held that are still valid now (for tests: a full scan, never on a request thread). */
    int live() {
        long now = clock.getAsLong();
        int n = 0;
        for (int i = 0; i < SLOTS; i++) {
            Entry e = slots.get(i);
            if (e != null && now < e.answerUntil()) {
                n++;
            }
        }
        return n;
    }

    private int slot(String ruleName, String key) {
        int h = (ruleName.hashCode() * 31 + key.hashCode()) * seed;
        return (h ^ (h >>> 16)) & (SLOTS - 1);
    }
}
