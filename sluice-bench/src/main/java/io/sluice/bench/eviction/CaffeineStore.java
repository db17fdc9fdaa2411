package io.sluice.bench.eviction;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.sluice.Clock;
import io.sluice.Decision;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.Store;
import io.sluice.internal.CompiledRule;
import io.sluice.internal.RuleEvaluator;
import io.sluice.internal.algorithm.Algorithm;
import io.sluice.internal.algorithm.Step;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The candidate the memory store's eviction was measured against (issue 17): the in-memory store's single-limit
 * hot path with a Caffeine cache bounded by {@code maximumSize} as its table instead of a
 * {@code ConcurrentHashMap} walked by a cursor. Caffeine evicts by W-TinyLFU on its own maintenance thread
 * (the common pool); its eviction listener, which runs atomically with the removal, swaps the holder to a
 * tombstone so a decision that read it before retries, as the store's own eviction does.
 *
 * <p>Kept to what the benchmark needs, and favourable to Caffeine: rules of one limit, tryAcquire only, and no
 * expiry (making Caffeine drop expired states would need an {@code Expiry} told of every committed write, which
 * costs a write-buffer task per decision). Not a store to use.
 */
final class CaffeineStore implements Store {
    private record Entry(CompiledRule rule, Object state, long expiresAt) {}

    private static final Entry DEAD = new Entry(null, null, Long.MIN_VALUE);

    private final Clock clock;
    private final Cache<String, AtomicReference<Entry>> cache;
    private volatile CompiledRule compiled;

    CaffeineStore(Clock clock, long maxKeys) {
        this.clock = clock;
        this.cache = Caffeine.newBuilder()
                .maximumSize(maxKeys)
                .<String, AtomicReference<Entry>>evictionListener((key, holder, cause) -> {
                    if (holder != null) {
                        holder.set(DEAD);
                    }
                })
                .build();
    }

    @Override
    public Decision decide(Rule rule, String key, Request request) {
        CompiledRule c = compiled;
        if (c == null || c.rule() != rule) {
            c = new CompiledRule(rule);
            compiled = c;
        }
        if (c.size() != 1) {
            throw new UnsupportedOperationException("the Caffeine candidate decides rules of one limit only");
        }
        Algorithm<Object> algorithm = c.algorithm(0);
        for (;;) {
            AtomicReference<Entry> holder = cache.getIfPresent(key);
            Entry current = holder == null ? null : holder.get();
            if (current == DEAD) {
                continue;
            }
            long now = clock.nowMicros();
            Object state = current == null || now >= current.expiresAt() ? null : current.state();
            long permits = RuleEvaluator.permitsOfOne(algorithm, state, now, request);
            Step<Object> step = algorithm.step(state, now, permits, RuleEvaluator.maxWaitOf(request));
            Object next = RuleEvaluator.nextOfOne(step);
            Decision decision = RuleEvaluator.decisionOfOne(algorithm, step, request, permits);
            if (next == state) {
                return decision;
            }
            Entry entry = new Entry(c, next, next == null ? Long.MIN_VALUE : algorithm.expiresAt(next));
            if (holder == null ? cache.asMap().putIfAbsent(key, new AtomicReference<>(entry)) == null
                    : holder.compareAndSet(current, entry)) {
                return decision;
            }
        }
    }

    @Override
    public CompletableFuture<Decision> decideAsync(Rule rule, String key, Request request) {
        return CompletableFuture.completedFuture(decide(rule, key, request));
    }

    @Override
    public boolean release(Rule rule, String key, long lease) {
        throw new UnsupportedOperationException("not measured");
    }

    @Override
    public CompletableFuture<Boolean> releaseAsync(Rule rule, String key, long lease) {
        throw new UnsupportedOperationException("not measured");
    }

    @Override
    public void reset(Rule rule, String key) {
        cache.invalidate(key);
    }

    /** Keys held, once Caffeine's pending maintenance has run. */
    long size() {
        cache.cleanUp();
        return cache.estimatedSize();
    }
}
