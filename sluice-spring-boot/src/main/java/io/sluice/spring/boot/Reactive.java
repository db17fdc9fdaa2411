package io.sluice.spring.boot;

import io.sluice.Decision;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/** The Reactor side of {@link RateLimitedInterceptor}; loaded only when Reactor is present. */
final class Reactive {

    private Reactive() {}

    static boolean isMono(Class<?> type) {
        return Mono.class.isAssignableFrom(type);
    }

    static boolean isFlux(Class<?> type) {
        return Flux.class.isAssignableFrom(type);
    }

    /** A Mono that decides when subscribed, then subscribes to the method's Mono or fails with the rejection. */
    static Mono<Object> mono(RateLimitedInterceptor.Plan plan, RateLimitedInterceptor.Callable call,
                             Supplier<CompletableFuture<Decision>> decide) {
        return decision(decide).flatMap(d -> {
            if (!d.allowed()) {
                return Mono.error(new RateLimitExceededException(plan.limiter().rule(), d));
            }
            return Mono.from(publisher(call));
        });
    }

    /** As {@link #mono}, for a Flux. */
    static Flux<Object> flux(RateLimitedInterceptor.Plan plan, RateLimitedInterceptor.Callable call,
                             Supplier<CompletableFuture<Decision>> decide) {
        return decision(decide).flatMapMany(d -> {
            if (!d.allowed()) {
                return Flux.error(new RateLimitExceededException(plan.limiter().rule(), d));
            }
            return Flux.from(publisher(call));
        });
    }

    /**
     * The decision, on subscription. A decision already made (memory store) continues on the subscriber's thread;
     * one that completes later continues on the parallel scheduler rather than on the thread that completed it.
     */
    private static Mono<Decision> decision(Supplier<CompletableFuture<Decision>> decide) {
        return Mono.defer(() -> {
            CompletableFuture<Decision> f = decide.get();
            return f.isDone() ? Mono.fromFuture(f) : Mono.fromFuture(f).publishOn(Schedulers.parallel());
        });
    }

    @SuppressWarnings("unchecked")
    private static Publisher<Object> publisher(RateLimitedInterceptor.Callable call) {
        try {
            Publisher<Object> p = (Publisher<Object>) call.call();
            return p == null ? Mono.empty() : p;
        } catch (Throwable t) {
            return Mono.error(t);
        }
    }
}
