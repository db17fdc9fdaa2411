package io.sluice.redis.internal;

import io.sluice.SluiceListener;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * The one door every call to Redis goes through, whatever the mode: it tells the listener how long each call
 * took and how it ended. The store's gate is its {@link CircuitBreaker}, which also refuses calls while it is
 * open.
 *
 * <p>For the breaker and the rules' failure policies to work in every mode, a call's future fails with a
 * {@link io.sluice.redis.RedisUnavailableException} when Redis was out of reach (the store's
 * {@code translate} does this for Lettuce's timeouts and connection errors; a mode that cannot decide because
 * of an outage should fail the same way), and with another exception otherwise. A mode that can still decide
 * locally while the gate refuses (e.g. from permits it holds) simply decides; only a failed decision goes to
 * the policy.
 */
public interface RedisGate {

    /**
     * Runs {@code call} (one logical Redis call, e.g. one decision, one lease or one sync round) and returns its
     * future; a gate that refuses the call returns a future failed with a
     * {@link io.sluice.redis.RedisStoreException} without running it.
     */
    <T> CompletableFuture<T> call(String operation, Supplier<CompletableFuture<T>> call);

    /** A gate that always lets calls through, timing them only when there is a listener. */
    static RedisGate direct(SluiceListener listener) {
        if (listener == SluiceListener.NONE) {
            return new RedisGate() {
                @Override
                public <T> CompletableFuture<T> call(String operation, Supplier<CompletableFuture<T>> call) {
                    return call.get();
                }
            };
        }
        return new RedisGate() {
            @Override
            public <T> CompletableFuture<T> call(String operation, Supplier<CompletableFuture<T>> call) {
                long start = System.nanoTime();
                return call.get().whenComplete((x, error) -> listener.onStoreCall(operation,
                        System.nanoTime() - start, error));
            }
        };
    }
}
