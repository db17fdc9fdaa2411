package io.sluice.redis.internal;

import io.sluice.Decision;
import io.sluice.Request;
import io.sluice.Rule;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Coalesced mode ({@link io.sluice.Mode#coalesced()}): a request joins the next call for its target (the rule on
 * the key), which decides the target's waiting requests inside Redis one after another in arrival order, each as
 * its own call would (the batch form of {@code rule.lua}). {@link Coalescer} does the queueing: at most one call
 * per target in flight, at most {@value #MAX_BATCH} requests per call. Releases of a coalesced rule go in line
 * with its decisions, so a later acquire's batch never overtakes them. docs/coalesced-mode.md has the design.
 * Thread-safe.
 */
final class CoalescedMode implements StoreMode {

    /** The most requests one coalesced call decides, so one script stays short (a few hundred µs at most). */
    static final int MAX_BATCH = 128;

    /** One queued request: its target, what it asks and who waits for the answer. */
    private record Queued(DecisionCall.Target target, DecisionCall.Op op, CompletableFuture<Object> outcome) {}

    /** The target of a coalesced request: requests of the same rule (any version of it) on the same key. */
    private record Target(String rule, String key) {}

    private final RedisGate gate;
    private final DecisionScript script;
    private final Coalescer<Queued> coalescer = new Coalescer<>(MAX_BATCH, this::send);

    CoalescedMode(RedisGate gate, DecisionScript script) {
        this.gate = gate;
        this.script = script;
    }

    @Override
    public CompletableFuture<Decision> decide(Rule rule, String key, Request request) {
        return submit(rule, key, DecisionCall.Op.decide(request));
    }

    @Override
    public CompletableFuture<Boolean> release(Rule rule, String key, long lease) {
        return submit(rule, key, DecisionCall.Op.release(lease));
    }

    /** Nothing to forget: a target is held only while its call is in flight. */
    @Override
    public void forget(Rule rule, String key) {}

    /** Targets with a call in flight (none once every coalesced request is answered). */
    int targetsInFlight() {
        return coalescer.targetsInFlight();
    }

    @SuppressWarnings("unchecked")
    private <T> CompletableFuture<T> submit(Rule rule, String key, DecisionCall.Op op) {
        CompletableFuture<Object> outcome = new CompletableFuture<>();
        try {
            coalescer.submit(new Target(rule.name(), key), new Queued(script.target(rule, key), op, outcome));
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
    private CompletableFuture<?> send(List<Queued> batch) {
        List<CompletableFuture<?>> calls = new ArrayList<>(1);
        int from = 0;
        for (int i = 1; i <= batch.size(); i++) {
            if (i == batch.size() || batch.get(i).target().rule() != batch.get(from).target().rule()) {
                calls.add(sendCall(batch.subList(from, i)));
                from = i;
            }
        }
        return calls.size() == 1 ? calls.get(0) : CompletableFuture.allOf(calls.toArray(new CompletableFuture<?>[0]));
    }

    private CompletableFuture<?> sendCall(List<Queued> requests) {
        CompletableFuture<List<Object>> outcomes = gate.call("decide", () -> {
            try {
                DecisionCall call = call(requests);
                return script.run(call.call()).thenApply(reply -> requests.size() == 1
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
                    requests.get(i).outcome().completeExceptionally(RedisFailures.unwrap(error));
                }
            }
        });
    }

    private DecisionCall call(List<Queued> requests) {
        DecisionCall.Target target = requests.get(0).target();
        if (requests.size() > 1) {
            List<DecisionCall.Op> ops = new ArrayList<>(requests.size());
            requests.forEach(r -> ops.add(r.op()));
            return script.batch(target, ops, script.now());
        }
        DecisionCall.Op op = requests.get(0).op();
        return op.isRelease()
                ? script.release(target, op.lease(), script.now())
                : script.decide(List.of(target), op.request(), script.now());
    }
}
