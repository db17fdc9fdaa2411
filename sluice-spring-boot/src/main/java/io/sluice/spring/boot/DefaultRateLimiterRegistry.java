package io.sluice.spring.boot;

import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.SluiceListener;
import io.sluice.Store;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/** {@link RateLimiterRegistry} over a fixed map; closing it closes the limiters, not the store (a bean of its own). */
final class DefaultRateLimiterRegistry implements RateLimiterRegistry, AutoCloseable {

    private final Store store;
    private final Map<String, RateLimiter> limiters;

    DefaultRateLimiterRegistry(Map<String, Rule> rules, Store store, SluiceListener listener) {
        this.store = store;
        Map<String, RateLimiter> map = new LinkedHashMap<>();
        rules.forEach((name, rule) -> map.put(name, RateLimiter.builder(rule).store(store).listener(listener).build()));
        this.limiters = Collections.unmodifiableMap(map);
    }

    @Override
    public RateLimiter limiter(String rule) {
        RateLimiter limiter = limiters.get(rule);
        if (limiter == null) {
            throw new IllegalArgumentException("no rule '" + rule + "'; rules are " + limiters.keySet());
        }
        return limiter;
    }

    @Override
    public Optional<RateLimiter> find(String rule) {
        return Optional.ofNullable(limiters.get(rule));
    }

    @Override
    public Map<String, RateLimiter> limiters() {
        return limiters;
    }

    @Override
    public Store store() {
        return store;
    }

    @Override
    public void close() {
        limiters.values().forEach(RateLimiter::close);
    }

    @Override
    public String toString() {
        return "RateLimiterRegistry{rules=" + limiters.keySet() + ", store=" + store + "}";
    }
}
