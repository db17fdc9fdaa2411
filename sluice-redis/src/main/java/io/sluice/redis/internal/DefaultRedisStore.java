package io.sluice.redis.internal;

import io.sluice.Decision;
import io.sluice.Mode;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.Settlement;
import io.sluice.SluiceListener;
import io.sluice.internal.Settling;
import io.sluice.redis.BatchRequest;
import io.sluice.redis.RedisStore;
import io.sluice.redis.RedisStoreException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The {@link RedisStore} behind {@link RedisStore#builder()}: the router. It connects, loads the script, sends
 * each request to its rule's {@link StoreMode} ({@link ExactMode}, {@link CoalescedMode}, {@link LeasedMode},
 * {@link SyncedMode}) and applies the rule's failure policy ({@link FailurePolicies}) to what a mode could not
 * decide because Redis was unavailable. Batches, and several targets decided together, go to
 * {@link BatchDecisions}. Every call to Redis goes through
 * the {@link CircuitBreaker}. The guarantees are stated on {@link RedisStore}.
 */
public final class DefaultRedisStore implements RedisStore {

    private final StoreSettings settings;
    private final RedisPort port;
    private final FailureTranslator failures;
    private final ScriptRunner scriptRunner;
    private final DecisionScript script;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final CircuitBreaker breaker;
    private final FailurePolicies policies;
    private final ExactMode exact;
    private final CoalescedMode coalesced;
    private final LeasedMode leased;
    private final SyncedMode synced;
    private final List<StoreMode> modes;
    private final BatchDecisions batches;

    private DefaultRedisStore(StoreSettings settings, RedisPort port, FailureTranslator failures,
                              ScriptRunner scriptRunner) {
        this.settings = settings;
        this.port = port;
        this.failures = failures;
        this.scriptRunner = scriptRunner;
        String where = failures.where();
        KeyLayout layout = new KeyLayout(settings.prefix());
        this.script = new DecisionScript(settings, SluiceScript.get(), scriptRunner, layout, closed::get);
        this.breaker = CircuitBreaker.of(settings, where);
        this.policies = new FailurePolicies(settings.clock(), breaker);
        this.exact = new ExactMode(breaker, script, DenialCache.of(settings));
        this.coalesced = new CoalescedMode(breaker, script);
        this.leased = new LeasedMode(exact, settings.clock(), settings.listener());
        ScriptRunner syncScript = scriptRunner.sibling(SluiceScript.sync(), "Sluice sync script");
        this.synced = new SyncedMode(settings, layout, breaker, script::compiled, syncScript, exact);
        this.modes = List.of(exact, coalesced, leased, synced);
        this.batches = new BatchDecisions(breaker, port, script, policies, failures);
    }

    /**
     * Connects, then loads the script (as functions or a script: {@link ScriptingChoice}) so the first decision needs
     * no reload.
     *
     * @throws RedisStoreException when Redis cannot be reached
     */
    public static DefaultRedisStore connect(StoreSettings settings) {
        return connect(settings, ClientSource.OWN);
    }

    /**
     * Connects through the client or on the resources {@code source} names, then loads the script.
     *
     * @throws IllegalArgumentException when the application's client names no URI and the settings none either
     * @throws RedisStoreException      when Redis cannot be reached
     */
    public static DefaultRedisStore connect(StoreSettings settings, ClientSource source) {
        String where = settings.uris().isEmpty() ? source.describe() : RedisUris.describe(settings.uris());
        RedisPort port;
        try {
            port = Ports.connect(settings, source);
        } catch (IllegalArgumentException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new RedisStoreException("cannot connect to Redis at " + where + ": " + e.getMessage(), e);
        }
        FailureTranslator failures = new FailureTranslator(where, settings.timeout(), settings.awaitBound());
        ScriptRunner runner;
        try {
            runner = ScriptingChoice.connect(settings, port, failures);
        } catch (RuntimeException e) {
            port.close();
            throw e;
        }
        return new DefaultRedisStore(settings, port, failures, runner);
    }

    // ------------------------------------------------------------------------------------------------ routing

    private StoreMode mode(Rule rule) {
        return switch (rule.mode().kind()) {
            case EXACT -> exact;
            case COALESCED -> coalesced;
            case LEASED -> leased;
            case SYNCED -> synced;
        };
    }

    /**
     * As {@link #decideAsync}, waiting at most {@link StoreSettings#awaitBound} for the unguarded decision and
     * applying the policy once ({@link FailurePolicies#await} says why).
     */
    @Override
    public Decision decide(Rule rule, String key, Request request) {
        if (closed.get()) {
            throw DecisionScript.closedError();
        }
        return policies.await(failures, rule, key, request, mode(rule).decide(rule, key, request));
    }

    /**
     * The rule's mode decides; when that fails because Redis is unavailable, whatever the mode, the rule's
     * failure policy does (see {@link FailurePolicies}).
     */
    @Override
    public CompletableFuture<Decision> decideAsync(Rule rule, String key, Request request) {
        if (closed.get()) {
            return CompletableFuture.failedFuture(DecisionScript.closedError());
        }
        return policies.guard(rule, key, request, mode(rule).decide(rule, key, request));
    }

    /**
     * Returns a lease, as {@link FailurePolicies#guardRelease} says: when Redis is unavailable and the rule has a
     * policy other than {@code raise}, the release answers false.
     */
    @Override
    public boolean release(Rule rule, String key, long lease) {
        return policies.awaitRelease(failures, rule, releaseAsync(rule, key, lease));
    }

    @Override
    public CompletableFuture<Boolean> releaseAsync(Rule rule, String key, long lease) {
        if (closed.get()) {
            return CompletableFuture.failedFuture(DecisionScript.closedError());
        }
        return policies.guardRelease(rule, key, lease, () -> mode(rule).release(rule, key, lease));
    }

    /**
     * Charges an estimate in exact mode (docs/reference/settle.md). Another mode decides in process against
     * state it reconciles later, with no one state to refund into: refused. Store failures are not turned into
     * the rule's failure policy: an estimate charged by a fallback could not be settled in Redis.
     */
    @Override
    public Decision charge(Rule rule, String key, long estimate, String ticketId, long lifetimeMicros) {
        return failures.await(chargeAsync(rule, key, estimate, ticketId, lifetimeMicros));
    }

    @Override
    public CompletableFuture<Decision> chargeAsync(Rule rule, String key, long estimate, String ticketId,
                                                   long lifetimeMicros) {
        checkSettles(rule);
        return exact.charge(rule, key, estimate, ticketId, lifetimeMicros);
    }

    @Override
    public Settlement settle(Rule rule, String key, String ticketId, long actual) {
        return failures.await(settleAsync(rule, key, ticketId, actual));
    }

    @Override
    public CompletableFuture<Settlement> settleAsync(Rule rule, String key, String ticketId, long actual) {
        checkSettles(rule);
        return exact.settle(rule, key, ticketId, actual);
    }

    private void checkSettles(Rule rule) {
        if (closed.get()) {
            throw DecisionScript.closedError();
        }
        if (rule.mode().kind() != Mode.Kind.EXACT) {
            throw new UnsupportedOperationException("rule '" + rule.name() + "' runs in "
                    + rule.mode().kind().name().toLowerCase(java.util.Locale.ROOT) + " mode, which cannot settle a"
                    + " ticket: its decisions are made in process, with no one state in Redis to refund into; use"
                    + " exact mode");
        }
        Settling.check(rule);
    }

    /** Forgets the key in Redis, in what every mode holds in process, and in the local fallback. */
    @Override
    public void reset(Rule rule, String key) {
        modes.forEach(m -> m.forget(rule, key));
        List<String> keys = new ArrayList<>(Arrays.asList(script.target(rule, key).stateKeys()));
        // The lockout's key too when the rule has none (any more): a lockout added back must not find its count.
        String lockoutKey = script.layout().lockoutKey(rule.name(), key);
        if (!keys.contains(lockoutKey)) {
            keys.add(lockoutKey);
        }
        policies.reset(rule, key);
        try {
            failures.await(breaker.call("reset", () -> port.del(keys).handle(failures::translate)));
        } finally {
            // Again: a denial sent before the DEL may have been cached since the first forget.
            exact.forget(rule, key);
        }
    }

    /** See {@link BatchDecisions#decideAll}. */
    @Override
    public List<Decision> decideAll(List<BatchRequest> requests) {
        if (requests.isEmpty()) {
            return List.of();
        }
        if (closed.get()) {
            throw DecisionScript.closedError();
        }
        return batches.decideAll(requests);
    }

    @Override
    public Decision decideTogether(List<Target> targets, Request request) {
        return together(targets, request, false);
    }

    @Override
    public Decision decideTogetherAcrossSlots(List<Target> targets, Request request) {
        return together(targets, request, true);
    }

    /** One script call over all the targets, without blocking the caller; a bad list throws at once. */
    @Override
    public CompletableFuture<Decision> decideTogetherAsync(List<Target> targets, Request request) {
        Target.check(targets, request);
        if (targets.size() == 1) {
            return decideAsync(targets.get(0).rule(), targets.get(0).key(), request);
        }
        return decideAllAsync(List.of(batches.together(targets, request, false))).thenApply(d -> d.get(0));
    }

    /** One request over several targets as a batch of one; in one slot unless {@code acrossSlots}. */
    private Decision together(List<Target> targets, Request request, boolean acrossSlots) {
        Target.check(targets, request);
        if (targets.size() == 1) {
            return decide(targets.get(0).rule(), targets.get(0).key(), request);
        }
        return decideAll(List.of(batches.together(targets, request, acrossSlots))).get(0);
    }

    /** See {@link BatchDecisions#decideAllAsync}. */
    @Override
    public CompletableFuture<List<Decision>> decideAllAsync(List<BatchRequest> requests) {
        if (requests.isEmpty()) {
            return CompletableFuture.completedFuture(List.of());
        }
        if (closed.get()) {
            return CompletableFuture.failedFuture(DecisionScript.closedError());
        }
        return batches.decideAllAsync(requests);
    }

    // ------------------------------------------------------------------------------------------------ lifecycle

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            synced.close();
            port.close();
            policies.close();
        }
    }

    // ------------------------------------------------------------------------------------------------ for tests and metrics

    /**
     * Runs one sync round of synced mode now, for every key this store syncs (as the round thread does every sync
     * interval), and returns when it is done: for tests with a manual clock.
     */
    public void syncNow() {
        synced.syncAll();
    }

    /** How many (rule, key) pairs this store holds synced-mode state for (for tests and metrics). */
    public int syncedKeys() {
        return synced.keys();
    }

    /** Replies answered from a stored reply because the same call arrived twice (for tests and metrics). */
    public long replayedReplies() {
        return script.replayedReplies();
    }

    /** Tries denied from the {@link DenialCache} without a round trip (for tests and metrics); 0 when it is off. */
    public long cachedDenials() {
        return exact.cachedDenials();
    }

    /** Denials held in the {@link DenialCache} that are still valid (for tests: scans the whole table). */
    public int cachedDenialEntries() {
        return exact.cachedDenialEntries();
    }

    /** How many times the script was loaded, the first time included (for tests and metrics). */
    public long scriptLoads() {
        return scriptRunner.loads();
    }

    /** Whether the store calls its scripts by {@code FCALL} (a functions library) rather than {@code EVALSHA}. */
    public boolean usesFunctions() {
        return scriptRunner.functions();
    }

    /** The state of the circuit breaker in front of Redis (for tests and health checks). */
    @Override
    public SluiceListener.BreakerState breakerState() {
        return breaker.state();
    }

    /** Leased permits this node never spent: expired, or dropped by reset or a rule change (for tests and metrics). */
    public long expiredLeasePermits() {
        return leased.expiredPermits();
    }

    /** Lease calls this node made (for tests and metrics). */
    public long leaseCalls() {
        return leased.leaseCalls();
    }

    /** The (rule, key) entries of leased mode held in memory (for tests). */
    public int leaseEntries() {
        return leased.entries();
    }

    /** Coalesced targets with a call in flight (for tests: none once every coalesced request is answered). */
    public int coalescedTargetsInFlight() {
        return coalesced.targetsInFlight();
    }

    /** The key layout in use (for tests and tools that inspect Redis). */
    public KeyLayout layout() {
        return script.layout();
    }

    @Override
    public String toString() {
        return "RedisStore{" + failures.where() + ", prefix=" + settings.prefix() + ", time="
                + (settings.clock() == null ? "server" : "client") + (scriptRunner.functions() ? ", FCALL" : ", EVALSHA")
                + (exact.cachesDenials() ? "" : ", no cached denials")
                + "}";
    }
}
