package io.sluice.redis.internal;

import io.sluice.Decision;
import io.sluice.Request;
import io.sluice.Store;
import io.sluice.redis.BatchRequest;
import io.sluice.redis.RedisStoreException;
import io.sluice.redis.RedisUnavailableException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * {@link io.sluice.redis.RedisStore#decideAll}: many requests, each over one or more (rule, key) targets, sent as
 * one pipelined flush of script calls, always exact whatever the rules' modes. A request whose targets' keys share
 * a hash slot is one call, all or nothing; otherwise one call per target, atomic per target only, and the
 * decisions are combined by the rule evaluator's reporting rules. Requests whose calls failed because Redis was
 * unavailable are decided by their targets' failure policies. Thread-safe.
 */
final class BatchDecisions {

    private final RedisGate gate;
    private final RedisPort port;
    private final DecisionScript script;
    private final FailurePolicies policies;
    private final FailureTranslator failures;

    BatchDecisions(RedisGate gate, RedisPort port, DecisionScript script, FailurePolicies policies,
                   FailureTranslator failures) {
        this.gate = gate;
        this.port = port;
        this.script = script;
        this.policies = policies;
        this.failures = failures;
    }

    /**
     * Waits at most the store's await bound. When the wait gives up, the requests are decided by their policies
     * here, and the batch's own completion, which would decide them again when its calls time out, is told not to
     * (whichever claims the batch first decides it).
     */
    List<Decision> decideAll(List<BatchRequest> requests) {
        AtomicBoolean claimed = new AtomicBoolean();
        CompletableFuture<List<Decision>> decided = decideAll(requests, claimed);
        try {
            return failures.await(decided);
        } catch (RedisStoreException e) {
            if (!RedisFailures.unavailable(e) || !claimed.compareAndSet(false, true)) {
                // Not an outage, or the batch's completion is deciding it right now: its outcome.
                if (e instanceof RedisUnavailableException) {
                    return failures.await(decided);
                }
                throw e;
            }
            List<Decision> decisions = new ArrayList<>(requests.size());
            for (BatchRequest request : requests) {
                decisions.add(policies.decideBatch(request, null, e));
            }
            return decisions;
        }
    }

    /**
     * One gate call for the whole batch (one pipelined flush); then each request whose call failed because
     * Redis was unavailable is decided by its targets' failure policies ({@link FailurePolicies#decideBatch}).
     */
    CompletableFuture<List<Decision>> decideAllAsync(List<BatchRequest> requests) {
        return decideAll(requests, new AtomicBoolean());
    }

    /** The batch; its completion decides only if it claims the batch first (see {@link #decideAll(List)}). */
    private CompletableFuture<List<Decision>> decideAll(List<BatchRequest> requests, AtomicBoolean claimed) {
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
        String now = script.now();
        List<List<DecisionCall>> groups = new ArrayList<>(requests.size());
        List<ScriptCall> calls = new ArrayList<>();
        for (BatchRequest request : requests) {
            List<DecisionCall> group = plan(request, now);
            groups.add(group);
            group.forEach(c -> calls.add(c.call()));
        }
        List<CompletableFuture<List<Object>>> replies = script.runPipelined(calls);
        List<List<CompletableFuture<Decision>>> decisions = new ArrayList<>(groups.size());
        int next = 0;
        for (List<DecisionCall> group : groups) {
            List<CompletableFuture<Decision>> parts = new ArrayList<>(group.size());
            for (DecisionCall call : group) {
                parts.add(replies.get(next++).thenApply(call::decision));
            }
            decisions.add(parts);
        }
        return decisions;
    }

    /**
     * One request over several targets ({@link io.sluice.Store#decideTogether}) as a batch of one.
     *
     * @throws IllegalArgumentException when the targets are in different slots and not {@code acrossSlots}
     */
    BatchRequest together(List<Store.Target> targets, Request request, boolean acrossSlots) {
        List<BatchRequest.Target> parts = new ArrayList<>(targets.size());
        for (Store.Target t : targets) {
            parts.add(new BatchRequest.Target(t.rule(), t.key()));
        }
        BatchRequest batch = new BatchRequest(parts, request);
        if (!acrossSlots && !oneSlot(batch)) {
            throw new IllegalArgumentException("targets " + describe(targets) + " hash to different Redis Cluster "
                    + "slots, so they cannot be decided together atomically; give their keys one {tag} (e.g. "
                    + "'{tenant:7}:user:42' and '{tenant:7}:all'), or use decideTogetherAcrossSlots, which decides "
                    + "each target on its own");
        }
        return batch;
    }

    private static String describe(List<Store.Target> targets) {
        List<String> names = new ArrayList<>(targets.size());
        for (Store.Target t : targets) {
            names.add(t.rule().name() + "/'" + t.key() + "'");
        }
        return String.join(", ", names);
    }

    /** Whether all the state keys of {@code request}'s targets share one hash slot: then it is one atomic call. */
    boolean oneSlot(BatchRequest request) {
        List<String> keys = new ArrayList<>();
        for (BatchRequest.Target t : request.targets()) {
            keys.addAll(Arrays.asList(script.target(t.rule(), t.key()).stateKeys()));
        }
        return port.sameSlot(keys);
    }

    /** One call when all targets' keys share a slot, else one call per target (atomic per target only). */
    private List<DecisionCall> plan(BatchRequest request, String now) {
        List<DecisionCall.Target> targets = new ArrayList<>();
        List<String> keys = new ArrayList<>();
        for (BatchRequest.Target t : request.targets()) {
            DecisionCall.Target target = script.target(t.rule(), t.key());
            targets.add(target);
            keys.addAll(Arrays.asList(target.stateKeys()));
        }
        if (port.sameSlot(keys)) {
            return List.of(script.decide(targets, request.request(), now));
        }
        List<DecisionCall> calls = new ArrayList<>();
        for (DecisionCall.Target target : targets) {
            calls.add(script.decide(List.of(target), request.request(), now));
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
}
