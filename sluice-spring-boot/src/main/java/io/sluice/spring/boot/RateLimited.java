package io.sluice.spring.boot;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Limits calls of a Spring bean's method (or of every public method of an annotated class) by a rule of the
 * {@link RateLimiterRegistry}:
 *
 * <pre>{@code
 * @RateLimited(rule = "login", key = "#username")
 * public Session login(String username, String password) { ... }
 *
 * @RateLimited(rule = "reports", key = "#tenant.id", permits = "#pages", maxWait = "2s")
 * public CompletableFuture<Report> render(Tenant tenant, int pages) { ... }
 * }</pre>
 *
 * <p>Over the limit, the call throws {@link RateLimitExceededException} without running the method (a
 * {@code CompletableFuture} or {@code Mono}/{@code Flux} method returns one failed with it instead); Spring MVC
 * and WebFlux answer it with 429, {@code Retry-After}, the {@code RateLimit} fields and a problem+json body, as
 * the filters do. With a {@link #maxWait}, the call waits up to that long for permits instead (see
 * {@link io.sluice.RateLimiter#acquire}): a plain method sleeps on its thread; a {@code CompletableFuture},
 * {@code Mono} or {@code Flux} method waits without blocking any thread. The rule must exist at start-up.
 */
@Target({ElementType.METHOD, ElementType.TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface RateLimited {

    /** The rule's name. */
    String rule();

    /**
     * The key, a SpEL expression over the method's arguments by name ({@code #userId}, {@code #order.customerId})
     * or by position ({@code #p0}, {@code #a0}); its value's {@code toString()} is the key. Default: the same key
     * for every call (a global limit on the method).
     */
    String key() default "";

    /** Permits each call takes: a SpEL expression over the arguments yielding a whole number, default 1. */
    String permits() default "1";

    /**
     * How long a call may wait for permits, as a duration such as {@code 500ms} or {@code 2s}; default 0: never
     * wait, reject at once.
     */
    String maxWait() default "0s";
}
