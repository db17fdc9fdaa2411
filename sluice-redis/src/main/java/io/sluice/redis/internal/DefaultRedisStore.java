package io.sluice.redis.internal;

import io.sluice.Decision;
import io.sluice.FailurePolicy;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.SluiceListener;
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
 * decide because Redis was unavailable. Batches go to {@link BatchDecisions}. Every call to Redis goes through
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
        // With a client clock the script decides at that clock's reading, so the cache counts on it too; else on
        // the monotonic system clock, in durations only: Redis's clock and this host's never need to agree.
        DenialCache denials = !settings.cacheDenials() ? null
                : new DenialCache((settings.clock() != null ? settings.clock() : io.sluice.Clock.system())::nowMicros);
        this.exact = new ExactMode(breaker, script, denials);
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
     * As {@link #decideAsync}, waiting at most {@link StoreSettings#awaitBound}. It waits for the unguarded
     * decision and applies the policy itself, once: were it to wait for the guarded future and give up first,
     * that future would still apply the policy when the call times out, charging a local fallback twice.
     */
    @Override
    public Decision decide(Rule rule, String key, Request request) {
        if (closed.get()) {
            throw DecisionScript.closedError();
        }
        try {
            return failures.await(mode(rule).decide(rule, key, request));
        } catch (RedisStoreException e) {
            if (FailurePolicies.applies(rule, e)) {
                return policies.decide(rule, key, request);
            }
            throw e;
        }
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
     * Returns a lease. A lease the local fallback granted goes back to the local store, never to Redis. When
     * Redis is unavailable and the rule has a policy other than {@code raise}, the release answers false: the
     * lease was not returned and holds its permits in Redis until its TTL ends.
     */
    @Override
    public boolean release(Rule rule, String key, long lease) {
        try {
            return failures.await(releaseAsync(rule, key, lease));
        } catch (RedisStoreException e) {
            if (FailurePolicies.applies(rule, e)) {
                return false;
            }
            throw e;
        }
    }

    @Override
    public CompletableFuture<Boolean> releaseAsync(Rule rule, String key, long lease) {
        if (closed.get()) {
            return CompletableFuture.failedFuture(DecisionScript.closedError());
        }
        if (FailurePolicies.fallbackLease(lease)) {
            try {
                return CompletableFuture.completedFuture(policies.releaseFallback(rule, key, lease));
            } catch (RuntimeException e) {
                return CompletableFuture.failedFuture(e);
            }
        }
        CompletableFuture<Boolean> released = mode(rule).release(rule, key, lease);
        if (rule.failurePolicy().kind() == FailurePolicy.Kind.RAISE) {
            return released;
        }
        return released.exceptionallyCompose(e -> FailurePolicies.applies(rule, e)
                ? CompletableFuture.completedFuture(false) : CompletableFuture.failedFuture(e));
    }

    /** Forgets the key in Redis, in what every mode holds in process, and in the local fallback. */
    @Override
    public void reset(Rule rule, String key) {
        modes.forEach(m -> m.forget(rule, key));
        List<String> keys = Arrays.asList(script.target(rule, key).stateKeys());
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
        return decideAllAsync(List.of(batch(targets, request, false))).thenApply(d -> d.get(0));
    }

    /** One request over several targets as a batch of one; in one slot unless {@code acrossSlots}. */
    private Decision together(List<Target> targets, Request request, boolean acrossSlots) {
        Target.check(targets, request);
        if (targets.size() == 1) {
            return decide(targets.get(0).rule(), targets.get(0).key(), request);
        }
        return decideAll(List.of(batch(targets, request, acrossSlots))).get(0);
    }

    /** @throws IllegalArgumentException when the targets are in different slots and not {@code acrossSlots} */
    private BatchRequest batch(List<Target> targets, Request request, boolean acrossSlots) {
        List<BatchRequest.Target> parts = new ArrayList<>(targets.size());
        for (Target t : targets) {
            parts.add(new BatchRequest.Target(t.rule(), t.key()));
        }
        BatchRequest batch = new BatchRequest(parts, request);
        if (!acrossSlots && !batches.oneSlot(batch)) {
            throw new IllegalArgumentException("targets " + describe(targets) + " hash to different Redis Cluster "
                    + "slots, so they cannot be decided together atomically; give their keys one {tag} (e.g. "
                    + "'{tenant:7}:user:42' and '{tenant:7}:all'), or use decideTogetherAcrossSlots, which decides "
                    + "each target on its own");
        }
        return batch;
    }

    private static String describe(List<Target> targets) {
        List<String> names = new ArrayList<>(targets.size());
        for (Target t : targets) {
            names.add(t.rule().name() + "/'" + t.key() + "'");
        }
        return String.join(", ", names);
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
