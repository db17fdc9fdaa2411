package io.sluice.spring.boot.app;

import io.sluice.spring.boot.RateLimited;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.stereotype.Service;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** Methods limited by {@link RateLimited}, each counting the calls that actually ran. */
@Service
public class LimitedService {

    private final AtomicInteger ran = new AtomicInteger();

    /** How many limited calls actually ran (a method, not a field: callers hold the proxy). */
    public int ran() {
        return ran.get();
    }

    @RateLimited(rule = "calls", key = "'plain:' + #user")
    public String plain(String user) {
        ran.incrementAndGet();
        return "hello " + user;
    }

    @RateLimited(rule = "calls", key = "'future:' + #user")
    public CompletableFuture<String> future(String user) {
        ran.incrementAndGet();
        return CompletableFuture.completedFuture("hello " + user);
    }

    @RateLimited(rule = "calls", key = "'mono:' + #user")
    public Mono<String> mono(String user) {
        return Mono.fromCallable(() -> {
            ran.incrementAndGet();
            return "hello " + user;
        });
    }

    @RateLimited(rule = "bulk", key = "'flux:' + #user", permits = "#n")
    public Flux<Integer> flux(String user, int n) {
        return Flux.range(1, n).doOnSubscribe(s -> ran.incrementAndGet());
    }

    @RateLimited(rule = "paced", key = "#user", maxWait = "2s")
    public String paced(String user) {
        ran.incrementAndGet();
        return "paced " + user;
    }
}
