package io.sluice.redis.internal;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisNoScriptException;
import io.sluice.Decision;
import io.sluice.Mode;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.internal.algorithm.Arith;
import io.sluice.redis.BatchRequest;
import io.sluice.redis.RedisStore;
import io.sluice.redis.RedisStoreException;
import io.sluice.redis.RedisUnavailableException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * The {@link RedisStore} behind {@link RedisStore#builder()}: compiles rules for the script, builds each call's
 * keys and arguments, runs it through the {@link RedisPort} (reloading the script on NOSCRIPT) and reads the
 * reply. The guarantees are stated on {@link RedisStore}.
 */
public final class DefaultRedisStore implements RedisStore {

    private static final Log log = Log.get(DefaultRedisStore.class);

    /** The most requests one coalesced call decides, so one script stays short (a few hundred µs at most). */
    static final int COALESCED_MAX_BATCH = 128;

    private final StoreSettings settings;
    private final RedisPort port;
    private final SluiceScript script = SluiceScript.get();
    private final KeyLayout layout;
    private final RequestIds ids = new RequestIds();
    private final String dedupTtlMillis;
    private final String where;
    private final ConcurrentHashMap<String, RedisRule> rules = new ConcurrentHashMap<>();
    private final AtomicReference<CompletableFuture<Void>> loading = new AtomicReference<>();
    private final AtomicLong replayedReplies = new AtomicLong();
    private final AtomicLong scriptLoads = new AtomicLong();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final RedisGate gate;
    private final CircuitBreaker breaker;
    private final FailurePolicies policies;
    private final SluiceScript syncScript = SluiceScript.sync();
    private final AtomicReference<CompletableFuture<Void>> syncLoading = new AtomicReference<>();
    private final Syncs syncs;
    private final Leases leases;
    /** Exact mode's denials learned from Redis, or null when the builder turned them off. */
    private final DenialCache denials;
    /** Requests of coalesced rules waiting for their target's call in flight. */
    private final Coalescer<Coalesced> coalescer = new Coalescer<>(COALESCED_MAX_BATCH, this::sendCoalesced);

    private DefaultRedisStore(StoreSettings settings, RedisPort port, String where) {
        this.settings = settings;
        this.port = port;
        this.leases = new Leases(this::leaseCall, settings.clock(), settings.listener());
        this.layout = new KeyLayout(settings.prefix());
        // With a client clock the script decides at that clock's reading, so the cache counts on it too; else on
        // the monotonic system clock, in durations only: Redis's clock and this host's never need to agree.
        this.denials = !settings.cacheDenials() ? null
                : new DenialCache((settings.clock() != null ? settings.clock() : io.sluice.Clock.system())::nowMicros);
        this.dedupTtlMillis = Long.toString(settings.dedupTtl().toMillis());
        this.where = where;
        this.breaker = CircuitBreaker.of(settings, where);
        this.gate = breaker;
        this.policies = new FailurePolicies(settings.clock(), breaker);
        this.syncs = new Syncs(settings, layout, gate, this::compiled, new Syncs.Transport() {
            @Override
            public CompletableFuture<List<Object>> call(ScriptCall call) {
                return syncRun(port.evalsha(syncScript.sha1(), call), call);
            }

            @Override
            public List<CompletableFuture<List<Object>>> pipelined(List<ScriptCall> calls) {
                List<CompletableFuture<List<Object>>> replies = port.evalshaPipelined(syncScript.sha1(), calls);
                List<CompletableFuture<List<Object>>> out = new ArrayList<>(replies.size());
                for (int i = 0; i < replies.size(); i++) {
                    out.add(syncRun(replies.get(i), calls.get(i)));
                }
                return out;
            }
        });
    }

    /**
     * Connects, then loads the script so the first decision needs no reload.
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
        DefaultRedisStore store = new DefaultRedisStore(settings, port, where);
        try {
            store.await(store.loadScript());
        } catch (RuntimeException e) {
            store.close();
            throw e;
        }
        return store;
    }

    // ------------------------------------------------------------------------------------------------ Store

    /**
     * As {@link #decideAsync}, waiting at most {@link StoreSettings#awaitBound}. It waits for the unguarded
     * decision and applies the policy itself, once: were it to wait for the guarded future and give up first,
     * that future would still apply the policy when the call times out, charging a local fallback twice.
     */
    @Override
    public Decision decide(Rule rule, String key, Request request) {
        if (closed.get()) {
            throw closedError();
        }
        try {
            return await(route(rule, key, request));
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
            return CompletableFuture.failedFuture(closedError());
        }
        return policies.guard(rule, key, request, route(rule, key, request));
    }

    private CompletableFuture<Decision> route(Rule rule, String key, Request request) {
        return switch (rule.mode().kind()) {
            case EXACT -> exact(rule, key, request);
            case COALESCED -> coalesced(rule, key, DecisionCall.Op.decide(request));
            case LEASED -> leased(rule, key, request);
            case SYNCED -> syncs.decide(rule, key, request);
        };
    }

    /**
     * One script call decides the request: the exact mode; a try Redis has just denied is answered from the
     * {@link DenialCache} while Redis would still deny it.
     */
    private CompletableFuture<Decision> exact(Rule rule, String key, Request request) {
        if (denials == null || !DenialCache.eligible(rule)) {
            return gate.call("decide", () -> exactCall(rule, key, request, this::now));
        }
        RedisRule compiled;
        try {
            compiled = compiled(rule);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        if (request.op() == Request.Op.TRY) {
            Decision cached = denials.lookup(compiled, key, request.permits());
            if (cached != null) {
                return CompletableFuture.completedFuture(cached);
            }
        }
        DenialCache.Sent sent = denials.sending();
        return gate.call("decide", () -> exactCall(rule, key, request, this::now)).thenApply(d -> {
            denials.record(compiled, key, request, sent, d);
            return d;
        });
    }

    /**
     * Leased mode: tries and best-effort tries are decided from the node's lease of the key ({@link Leases});
     * waits, reservations, peeks (and releases, below) go to Redis exactly, as do rules whose leases could not
     * be bounded by their windows (see {@link LeasePlan}).
     */
    private CompletableFuture<Decision> leased(Rule rule, String key, Request request) {
        try {
            return leases.handles(rule, request) ? leases.decide(rule, key, request) : exact(rule, key, request);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** One lease: a best-effort script call for {@code permits}, at the client time Leases read (or server time). */
    private CompletableFuture<Decision> leaseCall(Rule rule, String key, long permits, boolean serverTime,
                                                  long clientTime) {
        return gate.call("lease", () -> exactCall(rule, key, Request.tryAcquireAtMost(permits),
                () -> serverTime ? "" : clientTime(clientTime)));
    }

    /** One script call deciding {@code request} at {@code time} (the script's time argument, see {@link #now}). */
    private CompletableFuture<Decision> exactCall(Rule rule, String key, Request request, Supplier<String> time) {
        try {
            String now = time.get();
            DecisionCall call = DecisionCall.decide(List.of(target(rule, key)), request, now, requestId(), layout,
                    dedupTtlMillis);
            return run(port.evalsha(script.sha1(), call.call()), call.call()).thenApply(call::decision);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * Returns a lease. A lease the local fallback granted goes back to the local store, never to Redis. When
     * Redis is unavailable and the rule has a policy other than {@code raise}, the release answers false: the
     * lease was not returned and holds its permits in Redis until its TTL ends.
     */
    @Override
    public boolean release(Rule rule, String key, long lease) {
        try {
            return await(releaseAsync(rule, key, lease));
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
            return CompletableFuture.failedFuture(closedError());
        }
        if (FailurePolicies.fallbackLease(lease)) {
            try {
                return CompletableFuture.completedFuture(policies.releaseFallback(rule, key, lease));
            } catch (RuntimeException e) {
                return CompletableFuture.failedFuture(e);
            }
        }
        // A coalesced rule's release goes in line with the target's decisions, so a later acquire's batch
        // never overtakes it.
        CompletableFuture<Boolean> released = rule.mode().kind() == Mode.Kind.COALESCED
                ? coalesced(rule, key, DecisionCall.Op.release(lease))
                : gate.call("release", () -> releaseCall(rule, key, lease));
        if (rule.failurePolicy().kind() == io.sluice.FailurePolicy.Kind.RAISE) {
            return released;
        }
        return released.exceptionallyCompose(e -> FailurePolicies.applies(rule, e)
                ? CompletableFuture.completedFuture(false) : CompletableFuture.failedFuture(e));
    }

    private CompletableFuture<Boolean> releaseCall(Rule rule, String key, long lease) {
        try {
            DecisionCall call = DecisionCall.release(target(rule, key), lease, now(), requestId(), layout,
                    dedupTtlMillis);
            return run(port.evalsha(script.sha1(), call.call()), call.call()).thenApply(call::released);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    // ------------------------------------------------------------------------------------------------ coalesced

    /** One queued request of a coalesced rule: its target, what it asks and who waits for the answer. */
    private record Coalesced(DecisionCall.Target target, DecisionCall.Op op, CompletableFuture<Object> outcome) {}

    /** The target of a coalesced request: requests of the same rule (any version of it) on the same key. */
    private record CoalescedTarget(String rule, String key) {}

    /**
     * Coalesced mode: the request joins the next call for its target (see {@link Coalescer}), which decides the
     * target's waiting requests inside Redis one after another in arrival order, each as its own call would.
     */
    @SuppressWarnings("unchecked")
    private <T> CompletableFuture<T> coalesced(Rule rule, String key, DecisionCall.Op op) {
        CompletableFuture<Object> outcome = new CompletableFuture<>();
        try {
            coalescer.submit(new CoalescedTarget(rule.name(), key), new Coalesced(target(rule, key), op, outcome));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return (CompletableFuture<T>) outcome;
    }

    /**
     * Sends one batch of a target's requests: one script call through the gate, or one per rule version when
     * the rule changed while they waited (rare). A lone request goes as the single form, exactly as in exact
     * mode. Every request's future completes with its outcome, or all with the call's failure.
     */
    private CompletableFuture<?> sendCoalesced(List<Coalesced> batch) {
        List<CompletableFuture<?>> calls = new ArrayList<>(1);
        int from = 0;
        for (int i = 1; i <= batch.size(); i++) {
            if (i == batch.size() || batch.get(i).target().rule() != batch.get(from).target().rule()) {
                calls.add(sendCoalescedCall(batch.subList(from, i)));
                from = i;
            }
        }
        return calls.size() == 1 ? calls.get(0) : CompletableFuture.allOf(calls.toArray(new CompletableFuture<?>[0]));
    }

    private CompletableFuture<?> sendCoalescedCall(List<Coalesced> requests) {
        CompletableFuture<List<Object>> outcomes = gate.call("decide", () -> {
            try {
                DecisionCall call = coalescedCall(requests);
                return run(port.evalsha(script.sha1(), call.call()), call.call()).thenApply(reply -> requests.size() == 1
                        ? List.of(requests.get(0).op().isRelease() ? call.released(reply) : call.decision(reply))
                        : call.outcomes(reply));
            } catch (RuntimeException e) {
                return CompletableFuture.failedFuture(e);
            }
        });
        return outcomes.whenComplete((results, error) -> {
            for (int i = 0; i < requests.size(); i++) {
                if (error == null) {
                    requests.get(i).outcome().complete(results.get(i));
                } else {
                    requests.get(i).outcome().completeExceptionally(unwrap(error));
                }
            }
        });
    }

    private DecisionCall coalescedCall(List<Coalesced> requests) {
        DecisionCall.Target target = requests.get(0).target();
        if (requests.size() > 1) {
            List<DecisionCall.Op> ops = new ArrayList<>(requests.size());
            requests.forEach(r -> ops.add(r.op()));
            return DecisionCall.batch(target, ops, now(), requestId(), layout, dedupTtlMillis);
        }
        DecisionCall.Op op = requests.get(0).op();
        return op.isRelease()
                ? DecisionCall.release(target, op.lease(), now(), requestId(), layout, dedupTtlMillis)
                : DecisionCall.decide(List.of(target), op.request(), now(), requestId(), layout, dedupTtlMillis);
    }

    /** Forgets the key in Redis, in this node's leases and sync view, and in the local fallback. */
    @Override
    public void reset(Rule rule, String key) {
        leases.forget(rule, key);
        List<String> keys = Arrays.asList(target(rule, key).stateKeys());
        policies.reset(rule, key);
        syncs.forget(rule, key);
        if (denials != null) {
            denials.forget(rule.name(), key);
        }
        try {
            await(gate.call("reset", () -> port.del(keys).handle(this::translate)));
        } finally {
            if (denials != null) {
                // Again: a denial sent before the DEL may have been recorded since the first forget.
                denials.forget(rule.name(), key);
            }
        }
    }

    // ------------------------------------------------------------------------------------------------ batch

    /**
     * As {@link #decideAllAsync}, waiting at most {@link StoreSettings#awaitBound}. When the wait gives up, the
     * requests are decided by their policies here, and the batch's own completion, which would decide them
     * again when its calls time out, is told not to (whichever claims the batch first decides it).
     */
    @Override
    public List<Decision> decideAll(List<BatchRequest> requests) {
        AtomicBoolean claimed = new AtomicBoolean();
        CompletableFuture<List<Decision>> decided = decideAll(requests, claimed);
        try {
            return await(decided);
        } catch (RedisStoreException e) {
            if (!RedisFailures.unavailable(e) || !claimed.compareAndSet(false, true)) {
                // Not an outage, or the batch's completion is deciding it right now: its outcome.
                return e instanceof RedisUnavailableException ? await(decided) : rethrow(e);
            }
            List<Decision> decisions = new ArrayList<>(requests.size());
            for (BatchRequest request : requests) {
                decisions.add(policies.decideBatch(request, null, e));
            }
            return decisions;
        }
    }

    private static <T> T rethrow(RuntimeException e) {
        throw e;
    }

    /**
     * One gate call for the whole batch (one pipelined flush); then each request whose call failed because
     * Redis was unavailable is decided by its targets' failure policies ({@link FailurePolicies#decideBatch}).
     */
    @Override
    public CompletableFuture<List<Decision>> decideAllAsync(List<BatchRequest> requests) {
        return decideAll(requests, new AtomicBoolean());
    }

    /** The batch; its completion decides only if it claims the batch first (see {@link #decideAll(List)}). */
    private CompletableFuture<List<Decision>> decideAll(List<BatchRequest> requests, AtomicBoolean claimed) {
        if (requests.isEmpty()) {
            return CompletableFuture.completedFuture(List.of());
        }
        if (closed.get()) {
            return CompletableFuture.failedFuture(closedError());
        }
        List<List<CompletableFuture<Decision>>> parts = new ArrayList<>(requests.size());
        CompletableFuture<Void> all = gate.call("decide_all", () -> {
            parts.addAll(pipelined(requests));
            return CompletableFuture.allOf(parts.stream().flatMap(List::stream).toArray(CompletableFuture<?>[]::new));
        });
        return all.handle((x, error) -> {
            if (!claimed.compareAndSet(false, true)) {
                return null;    // a synchronous caller gave up waiting and decided the batch itself
            }
            if (error == null) {
                List<Decision> decisions = new ArrayList<>(requests.size());
                for (List<CompletableFuture<Decision>> request : parts) {
                    decisions.add(combine(request.stream().map(CompletableFuture::join).toList()));
                }
                return decisions;
            }
            List<Decision> decisions = new ArrayList<>(requests.size());
            for (int i = 0; i < requests.size(); i++) {
                // No parts: the gate refused the batch, or it failed before anything was sent.
                decisions.add(policies.decideBatch(requests.get(i), parts.isEmpty() ? null : parts.get(i), error));
            }
            return decisions;
        });
    }

    /** Sends every request's script calls in one flush; per request, the decisions of its calls. */
    private List<List<CompletableFuture<Decision>>> pipelined(List<BatchRequest> requests) {
        // One client time for the whole batch: it is decided at one instant, like one flush.
        String now = now();
        List<List<DecisionCall>> groups = new ArrayList<>(requests.size());
        List<ScriptCall> calls = new ArrayList<>();
        for (BatchRequest request : requests) {
            List<DecisionCall> group = plan(request, now);
            groups.add(group);
            group.forEach(c -> calls.add(c.call()));
        }
        List<CompletableFuture<List<Object>>> replies = port.evalshaPipelined(script.sha1(), calls);
        List<List<CompletableFuture<Decision>>> decisions = new ArrayList<>(groups.size());
        int next = 0;
        for (List<DecisionCall> group : groups) {
            List<CompletableFuture<Decision>> parts = new ArrayList<>(group.size());
            for (DecisionCall call : group) {
                parts.add(run(replies.get(next++), call.call()).thenApply(call::decision));
            }
            decisions.add(parts);
        }
        return decisions;
    }

    /** One call when all targets' keys share a slot, else one call per target (atomic per target only). */
    private List<DecisionCall> plan(BatchRequest request, String now) {
        List<DecisionCall.Target> targets = new ArrayList<>();
        List<String> keys = new ArrayList<>();
        for (BatchRequest.Target t : request.targets()) {
            DecisionCall.Target target = target(t.rule(), t.key());
            targets.add(target);
            keys.addAll(Arrays.asList(target.stateKeys()));
        }
        if (port.sameSlot(keys)) {
            return List.of(DecisionCall.decide(targets, request.request(), now, requestId(), layout, dedupTtlMillis));
        }
        List<DecisionCall> calls = new ArrayList<>();
        for (DecisionCall.Target target : targets) {
            calls.add(DecisionCall.decide(List.of(target), request.request(), now, requestId(), layout, dedupTtlMillis));
        }
        return calls;
    }

    /**
     * One decision from the decisions of targets decided apart, by the rule evaluator's reporting rules; it
     * carries the source of the decision it reports (a failure policy's, for a target decided by one).
     */
    static Decision combine(List<Decision> ds) {
        if (ds.size() == 1) {
            return ds.get(0);
        }
        boolean allowed = ds.stream().allMatch(Decision::allowed);
        long remaining = ds.stream().mapToLong(Decision::remaining).min().orElseThrow();
        long reset = ds.stream().mapToLong(Decision::resetAfterMicros).max().orElseThrow();
        if (allowed) {
            Decision tightest = ds.stream().filter(d -> d.remaining() == remaining).findFirst().orElseThrow();
            long granted = ds.stream().mapToLong(Decision::granted).min().orElseThrow();
            long wait = ds.stream().mapToLong(Decision::waitMicros).max().orElseThrow();
            long lease = ds.stream().mapToLong(Decision::lease).filter(l -> l != Decision.NO_LEASE).findFirst()
                    .orElse(Decision.NO_LEASE);
            return new Decision(true, granted, remaining, 0, reset, wait, tightest.limit(), lease,
                    tightest.source());
        }
        Decision decider = null;
        for (Decision d : ds) {
            if (!d.allowed() && (decider == null || d.retryAfterMicros() > decider.retryAfterMicros())) {
                decider = d;
            }
        }
        return new Decision(false, 0, remaining, decider.retryAfterMicros(), reset, 0, decider.limit(),
                Decision.NO_LEASE, decider.source());
    }

    // ------------------------------------------------------------------------------------------------ calls

    private DecisionCall.Target target(Rule rule, String key) {
        RedisRule compiled = compiled(rule);
        return new DecisionCall.Target(compiled, key, compiled.stateKeys(layout, key));
    }

    /**
     * The compiled form of {@code rule}, cached per rule name. A changed rule (e.g. after
     * {@code RateLimiter.updateLimit}) replaces the entry as its next version, which remembers the previous
     * versions of each limit so the script can migrate states stored under them (see {@link RedisRule}).
     */
    private RedisRule compiled(Rule rule) {
        if (closed.get()) {
            throw closedError();
        }
        RedisRule cached = rules.get(rule.name());
        if (cached != null && (cached.rule() == rule || cached.rule().equals(rule))) {
            return cached;
        }
        return rules.compute(rule.name(), (name, current) -> current != null && current.rule().equals(rule) ? current
                : RedisRule.compile(rule, script, current));
    }

    private static IllegalStateException closedError() {
        return new IllegalStateException("the Redis store is closed");
    }

    private String requestId() {
        return settings.deduplicate() ? ids.next() : "";
    }

    /** The client time as the script's ARGV ("now,slackMillis"), or "" for Redis server time. */
    private String now() {
        if (settings.clock() == null) {
            return "";
        }
        return clientTime(settings.clock().nowMicros());
    }

    /** A client clock reading as the script's ARGV ("now,slackMillis"). */
    private String clientTime(long now) {
        if (now < 0 || now > Arith.MAX_TIME) {
            throw new IllegalStateException("clock reading must be in [0, 2^53] microseconds since the epoch, was "
                    + now);
        }
        return now + "," + settings.clientTimeSlack().toMillis();
    }

    /**
     * The reply of a first attempt; on NOSCRIPT (Redis restarted, failed over, or SCRIPT FLUSH) the script is
     * loaded again on every node and the call retried once. A retry cannot charge twice: the first attempt
     * ran nothing. Errors become {@link RedisStoreException}.
     */
    private CompletableFuture<List<Object>> run(CompletableFuture<List<Object>> attempt, ScriptCall call) {
        return attempt.handle((reply, error) -> {
            if (error == null) {
                return CompletableFuture.completedFuture(reply);
            }
            if (unwrap(error) instanceof RedisNoScriptException) {
                return loadScript().thenCompose(x -> port.evalsha(script.sha1(), call));
            }
            return CompletableFuture.<List<Object>>failedFuture(error);
        }).thenCompose(f -> f).handle(this::translate).thenApply(reply -> {
            if (DecisionCall.replayed(reply)) {
                replayedReplies.incrementAndGet();
                log.debug("answered a replayed call from its stored reply: {}", call);
            }
            return reply;
        });
    }

    /** {@link #run} for the sync script (synced mode): NOSCRIPT loads it, once for concurrent failures. */
    private CompletableFuture<List<Object>> syncRun(CompletableFuture<List<Object>> attempt, ScriptCall call) {
        return attempt.handle((reply, error) -> {
            if (error == null) {
                return CompletableFuture.completedFuture(reply);
            }
            if (unwrap(error) instanceof RedisNoScriptException) {
                return loadSyncScript().thenCompose(x -> port.evalsha(syncScript.sha1(), call));
            }
            return CompletableFuture.<List<Object>>failedFuture(error);
        }).thenCompose(f -> f).handle((reply, error) -> {
            if (error != null && unwrap(error) instanceof RedisCommandExecutionException e) {
                // Line numbers of the sync script, not of the decision script translate would name.
                throw new RedisStoreException("Redis at " + where + " failed the Sluice sync script: "
                        + syncScript.explain(e.getMessage()), e);
            }
            return translate(reply, error);
        });
    }

    private CompletableFuture<Void> loadSyncScript() {
        CompletableFuture<Void> mine = new CompletableFuture<>();
        CompletableFuture<Void> current = syncLoading.compareAndExchange(null, mine);
        if (current != null) {
            return current;
        }
        port.scriptLoad(syncScript.source()).whenComplete((x, error) -> {
            syncLoading.set(null);
            if (error == null) {
                mine.complete(null);
            } else {
                mine.completeExceptionally(error);
            }
        });
        return mine.handle(this::translate);
    }

    /** Loads the script on every node; concurrent NOSCRIPT failures share one load. */
    private CompletableFuture<Void> loadScript() {
        CompletableFuture<Void> mine = new CompletableFuture<>();
        CompletableFuture<Void> current = loading.compareAndExchange(null, mine);
        if (current != null) {
            return current;
        }
        if (scriptLoads.incrementAndGet() > 1) {
            log.info("Redis at {} lost the Sluice script (restart, failover or SCRIPT FLUSH); loading it again", where);
        }
        port.scriptLoad(script.source()).whenComplete((x, error) -> {
            loading.set(null);
            if (error == null) {
                mine.complete(null);
            } else {
                mine.completeExceptionally(error);
            }
        });
        return mine.handle(this::translate);
    }

    /**
     * Passes a value through, or turns a Redis client failure into a {@link RedisStoreException}: a
     * {@link RedisUnavailableException} when Redis was out of reach or cannot serve now (what the breaker counts
     * and the failure policies decide), a plain one when Redis answered with a script error.
     */
    private <T> T translate(T value, Throwable error) {
        if (error == null) {
            return value;
        }
        Throwable cause = unwrap(error);
        if (cause instanceof RedisStoreException e) {
            throw e;
        }
        if (cause instanceof RedisCommandTimeoutException) {
            throw new RedisUnavailableException("Redis at " + where + " did not answer within " + settings.timeout()
                    + "; the request may or may not have been charged", cause);
        }
        if (cause instanceof RedisCommandExecutionException && RedisFailures.unavailableReply(cause.getMessage())) {
            throw new RedisUnavailableException("Redis at " + where + " cannot serve now: " + cause.getMessage(), cause);
        }
        if (cause instanceof RedisCommandExecutionException) {
            throw new RedisStoreException("Redis at " + where + " failed the Sluice script: "
                    + script.explain(cause.getMessage()), cause);
        }
        if (cause instanceof IllegalArgumentException || cause instanceof IllegalStateException) {
            throw (RuntimeException) cause;
        }
        if (RedisFailures.unavailable(cause)) {
            throw new RedisUnavailableException("Redis at " + where + " is unavailable: " + cause, cause);
        }
        throw new RedisStoreException("Redis at " + where + " failed: " + cause, cause);
    }

    private static Throwable unwrap(Throwable error) {
        return RedisFailures.unwrap(error);
    }

    /**
     * Waits for a store future: Lettuce completes it within the timeout (and a timer tick);
     * {@link StoreSettings#awaitBound} bounds the wait for calls that chain commands.
     */
    private <T> T await(CompletableFuture<T> future) {
        try {
            return future.get(settings.awaitBound().toNanos(), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            Throwable cause = unwrap(e);
            if (cause instanceof RuntimeException r) {
                throw r;
            }
            throw new RedisStoreException("Redis at " + where + " failed: " + cause, cause);
        } catch (TimeoutException e) {
            throw new RedisUnavailableException("Redis at " + where + " did not answer within " + settings.timeout()
                    + " (the wait gave up after " + settings.awaitBound() + "); the request may or may not have been "
                    + "charged", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RedisStoreException("interrupted while waiting for Redis at " + where, e);
        }
    }

    // ------------------------------------------------------------------------------------------------ lifecycle

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            syncs.close();
            port.close();
            policies.close();
        }
    }

    /**
     * Runs one sync round of synced mode now, for every key this store syncs (as the round thread does every sync
     * interval), and returns when it is done: for tests with a manual clock.
     */
    public void syncNow() {
        syncs.syncAll();
    }

    /** How many (rule, key) pairs this store holds synced-mode state for (for tests and metrics). */
    public int syncedKeys() {
        return syncs.keys();
    }

    /** Replies answered from a stored reply because the same call arrived twice (for tests and metrics). */
    public long replayedReplies() {
        return replayedReplies.get();
    }

    /** Tries denied from the {@link DenialCache} without a round trip (for tests and metrics); 0 when it is off. */
    public long cachedDenials() {
        return denials == null ? 0 : denials.answered();
    }

    /** Denials held in the {@link DenialCache} that are still valid (for tests: scans the whole table). */
    public int cachedDenialEntries() {
        return denials == null ? 0 : denials.live();
    }

    /** How many times the script was loaded, the first time included (for tests and metrics). */
    public long scriptLoads() {
        return scriptLoads.get();
    }

    /** The state of the circuit breaker in front of Redis (for tests and health checks). */
    @Override
    public io.sluice.SluiceListener.BreakerState breakerState() {
        return breaker.state();
    }

    /** Leased permits this node never spent: expired, or dropped by reset or a rule change (for tests and metrics). */
    public long expiredLeasePermits() {
        return leases.expiredPermits();
    }

    /** Lease calls this node made (for tests and metrics). */
    public long leaseCalls() {
        return leases.leaseCalls();
    }

    /** The (rule, key) entries of leased mode held in memory (for tests). */
    public int leaseEntries() {
        return leases.entries();
    }

    /** Coalesced targets with a call in flight (for tests: none once every coalesced request is answered). */
    public int coalescedTargetsInFlight() {
        return coalescer.targetsInFlight();
    }

    /** The key layout in use (for tests and tools that inspect Redis). */
    public KeyLayout layout() {
        return layout;
    }

    @Override
    public String toString() {
        return "RedisStore{" + where + ", prefix=" + settings.prefix() + ", time="
                + (settings.clock() == null ? "server" : "client") + (denials == null ? ", no cached denials" : "")
                + "}";
    }
}
