package io.sluice.redis.internal;

import io.sluice.SluiceListener;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * The one door every call to Redis goes through, whatever the mode: it tells the listener how long each call
 * took and how it ended. (The circuit breaker is a gate that also refuses calls while it is open.)
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
