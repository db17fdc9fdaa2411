package io.sluice.redis;

import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import java.time.Duration;

/**
 * What an application that uses the Redis store does, run by {@link LibraryLoggingIT} in a JVM of its own on the
 * module's runtime class path alone: {@code java LibraryUserMain REDIS_URI} prints the decision's verdict.
 */
public final class LibraryUserMain {

    private LibraryUserMain() {}

    public static void main(String[] args) {
        Rule rule = Rule.of("api", FixedWindow.of(10, Duration.ofMinutes(1)).named("per_minute"));
        try (RedisStore store = RedisStore.builder().uri(args[0]).timeout(Duration.ofSeconds(10)).build();
             RateLimiter limiter = RateLimiter.builder(rule).store(store).build()) {
            Decision d = limiter.tryAcquire("key:1");
            System.out.println("allowed=" + d.allowed());
        }
    }
}
