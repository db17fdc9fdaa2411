package io.sluice.redis.internal;

import io.sluice.Decision;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.internal.Settling;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * Exact mode ({@link io.sluice.Mode#exact()}): one script call decides each request, atomically with every other
 * node's calls, in one round trip. A try that Redis has just denied is answered from the {@link DenialCache},
 * without a round trip, while Redis would still deny it (docs/cached-denials.md says when that applies).
 *
 * <p>The other modes send here what they do not decide themselves (leased mode's waits and peeks, every mode's
 * releases), and leased mode takes its leases through {@link #lease}. Thread-safe.
 */
final class ExactMode implements StoreMode {

    private final RedisGate gate;
    private final DecisionScript script;
    /** Denials learned from Redis, or null when the builder turned them off. */
    private final DenialCache denials;

    /**
     * @param denials the cache of denials, or null for none
     */
    ExactMode(RedisGate gate, DecisionScript script, DenialCache denials) {
        this.gate = gate;
        this.script = script;
        this.denials = denials;
    }

    /**
     * One script call decides the request; a try Redis has just denied is answered from the cache while Redis
     * would still deny it.
     */
    @Override
    public CompletableFuture<Decision> decide(Rule rule, String key, Request request) {
        if (denials == null || !DenialCache.eligible(rule)) {
            return gate.call("decide", () -> call(rule, key, request, script::now));
        }
        RedisRule compiled;
        try {
            compiled = script.compiled(rule);
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
        return gate.call("decide", () -> call(rule, key, request, script::now)).thenApply(d -> {
            denials.record(compiled, key, request, sent, d);
            return d;
        });
    }

    /**
     * One lease of leased mode: a best-effort script call for {@code permits}, at Redis server time or at the
     * client time {@code clientTime} the caller read.
     */
    CompletableFuture<Decision> lease(Rule rule, String key, long permits, boolean serverTime, long clientTime) {
        return gate.call("lease", () -> call(rule, key, Request.tryAcquireAtMost(permits),
                () -> serverTime ? "" : script.clientTime(clientTime)));
    }

    /** One script call deciding {@code request} at {@code time} (the script's time argument). */
    private CompletableFuture<Decision> call(Rule rule, String key, Request request, Supplier<String> time) {
        try {
            String now = time.get();
            DecisionCall call = script.decide(List.of(script.target(rule, key)), request, now);
            return script.run(call.call()).thenApply(call::decision);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    @Override
    public CompletableFuture<Boolean> release(Rule rule, String key, long lease) {
        return gate.call("release", () -> {
            try {
                DecisionCall call = script.release(script.target(rule, key), lease, script.now());
                return script.run(call.call()).thenApply(call::released);
            } catch (RuntimeException e) {
                return CompletableFuture.failedFuture(e);
            }
        });
    }

    /**
     * An estimated charge (docs/reference/settle.md): a try of the estimate that writes a ticket when admitted.
     * A ticket id still open for the rule and key is refused by the script, charging nothing, and comes out as
     * the {@link IllegalArgumentException} the in-memory store throws.
     */
    CompletableFuture<Decision> charge(Rule rule, String key, long estimate, String ticketId, long lifetimeMicros) {
        return gate.call("charge", () -> {
            try {
                DecisionCall call = script.charge(script.target(rule, key), estimate, ticketId, lifetimeMicros,
                        script.now());
                return script.run(call.call()).thenApply(call::decision).exceptionallyCompose(e ->
                        CompletableFuture.failedFuture(DecisionCall.ticketOpen(e)
                                ? Settling.alreadyOpen(rule.name(), key, ticketId) : e));
            } catch (RuntimeException e) {
                return CompletableFuture.failedFuture(e);
            }
        });
    }

    /**
     * The settlement of a ticket. A refund may admit what a cached denial of the key still rejects, so the key's
     * cached denial is dropped once Redis has answered.
     */
    CompletableFuture<io.sluice.Settlement> settle(Rule rule, String key, String ticketId, long actual) {
        return gate.call("settle", () -> {
            try {
                DecisionCall call = script.settle(script.target(rule, key), ticketId, actual, script.now());
                return script.run(call.call()).thenApply(reply -> {
                    io.sluice.Settlement s = call.settlement(reply);
                    forget(rule, key);
                    return s;
                });
            } catch (RuntimeException e) {
                return CompletableFuture.failedFuture(e);
            }
        });
    }

    /** Drops the key's cached denial. The store calls it again after deleting the key's states. */
    @Override
    public void forget(Rule rule, String key) {
        if (denials != null) {
            denials.forget(rule.name(), key);
        }
    }

    /** Whether denials are cached. */
    boolean cachesDenials() {
        return denials != null;
    }

    /** Tries denied from the cache without a round trip; 0 when it is off. */
    long cachedDenials() {
        return denials == null ? 0 : denials.answered();
    }

    /** Denials held in the cache that are still valid (scans the whole table). */
    int cachedDenialEntries() {
        return denials == null ? 0 : denials.live();
    }
}
