package io.sluice.spring.boot;

import io.sluice.RateLimiter;
import io.sluice.Store;
import java.util.Map;
import java.util.Optional;

/**
 * The application's limiters: one {@link RateLimiter} per configured rule, all on the one {@link Store} bean,
 * looked up by rule name. The filters and {@link RateLimited} use it; so can application code:
 *
 * <pre>{@code
 * Decision d = registry.limiter("login").tryAcquire(username);
 * }</pre>
 *
 * <p>Thread-safe; the set of rules is fixed at start-up.
 */
public interface RateLimiterRegistry {

    /**
     * The limiter of the rule of this name.
     *
     * @throws IllegalArgumentException when no rule has that name (the message lists the rules)
     */
    RateLimiter limiter(String rule);

    /** The limiter of the rule of this name, if there is one. */
    Optional<RateLimiter> find(String rule);

    /** Every limiter, by rule name, in configuration order. */
    Map<String, RateLimiter> limiters();

    /** The store every limiter decides in. */
    Store store();
}
