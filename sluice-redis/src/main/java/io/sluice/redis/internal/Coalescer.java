package io.sluice.redis.internal;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ForkJoinPool;
import java.util.function.Function;

/**
 * The queueing of coalesced mode: at most one call in flight per target (a rule on a key). A request for a
 * target with no call in flight is sent at once, alone; requests that arrive while a call is in flight wait,
 * in arrival order, and when it completes they all go out together, at most {@code maxBatch} per call (more
 * become several calls written back to back on the same connection, in order). So a quiet target pays no
 * added latency, and a busy one pays one round trip per batch instead of one per request.
 *
 * <p>A target is in the map exactly while a call for it is in flight, with the requests that arrived since;
 * every completion takes all of them, and a target with none left leaves the map. The queue therefore holds
 * only what arrives during one round trip. Nothing blocks: {@link ConcurrentHashMap#compute} makes each
 * transition atomic per target, and calls are sent outside it.
 *
 * <p>The coalescer knows nothing of Redis: {@code send} sends one call for a batch and completes every
 * request of it (with its outcome or the call's failure); the future it returns completes when the call has
 * been answered, successfully or not. Thread-safe.
 *
 * @param <R> a queued request
 */
final class Coalescer<R> {

    /**
     * Rounds in a row that one thread runs when each call completes before {@code send} returns (Redis was not
     * even asked: an open circuit breaker, a closed store); after that the next round runs on the common pool,
     * so no caller's thread keeps failing the requests of others for long.
     */
    private static final int SYNCHRONOUS_ROUNDS = 16;

    private final int maxBatch;
    private final Function<List<R>, CompletableFuture<?>> send;
    private final ConcurrentHashMap<Object, ArrayDeque<R>> waiting = new ConcurrentHashMap<>();

    /**
     * @param maxBatch the most requests one call carries
     * @param send     sends one call for a batch of requests of one target (see the class comment)
     */
    Coalescer(int maxBatch, Function<List<R>, CompletableFuture<?>> send) {
        if (maxBatch < 1) {
            throw new IllegalArgumentException("maxBatch must be at least 1, was " + maxBatch);
        }
        this.maxBatch = maxBatch;
        this.send = send;
    }

    /** Sends {@code request} for {@code target} at once if no call for the target is in flight, else queues it. */
    void submit(Object target, R request) {
        boolean[] first = new boolean[1];
        waiting.compute(target, (t, queue) -> {
            if (queue == null) {
                first[0] = true;
                return new ArrayDeque<>();
            }
            queue.add(request);
            return queue;
        });
        if (first[0]) {
            List<R> alone = new ArrayList<>(1);
            alone.add(request);
            run(target, List.of(alone), 0);
        }
    }

    /** Targets with a call in flight (for tests: an idle coalescer holds none). */
    int targetsInFlight() {
        return waiting.size();
    }

    /** Sends the batches of one round; when all are answered, the next round takes what arrived meanwhile. */
    private void run(Object target, List<List<R>> batches, int synchronousRounds) {
        List<List<R>> round = batches;
        int rounds = synchronousRounds;
        while (round != null) {
            CompletableFuture<?> answered = sendAll(round);
            if (!answered.isDone()) {
                answered.whenComplete((x, error) -> run(target, next(target), 0));
                return;
            }
            round = next(target);
            if (round != null && ++rounds >= SYNCHRONOUS_ROUNDS) {
                List<List<R>> later = round;
                ForkJoinPool.commonPool().execute(() -> run(target, later, 0));
                return;
            }
        }
    }

    private CompletableFuture<?> sendAll(List<List<R>> round) {
        CompletableFuture<?>[] calls = new CompletableFuture<?>[round.size()];
        for (int i = 0; i < calls.length; i++) {
            try {
                calls[i] = send.apply(round.get(i));
            } catch (RuntimeException e) {
                // send completes its requests itself; a throw here is a bug, but must not stall the target.
                calls[i] = CompletableFuture.failedFuture(e);
            }
        }
        return calls.length == 1 ? calls[0] : CompletableFuture.allOf(calls);
    }

    /** All requests that arrived during the last round, in batches of at most maxBatch; null (and the target leaves) when none. */
    private List<List<R>> next(Object target) {
        List<List<R>> batches = new ArrayList<>(1);
        waiting.compute(target, (t, queue) -> {
            if (queue == null || queue.isEmpty()) {
                return null;
            }
            while (!queue.isEmpty()) {
                List<R> batch = new ArrayList<>(Math.min(queue.size(), maxBatch));
                while (batch.size() < maxBatch && !queue.isEmpty()) {
                    batch.add(queue.poll());
                }
                batches.add(batch);
            }
            return queue;
        });
        return batches.isEmpty() ? null : batches;
    }
}
