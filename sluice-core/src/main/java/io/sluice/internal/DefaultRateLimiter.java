package io.sluice.internal;

import io.sluice.Charge;
import io.sluice.Decision;
import io.sluice.Limit;
import io.sluice.RateLimiter;
import io.sluice.RefreshPeriod;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.Settlement;
import io.sluice.Sleeper;
import io.sluice.SluiceListener;
import io.sluice.Store;
import io.sluice.Ticket;
import io.sluice.Tier;
import io.sluice.internal.algorithm.Arith;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/** The {@link RateLimiter} behind {@link RateLimiter#builder}: validation, then one store call per decision. */
public final class DefaultRateLimiter implements RateLimiter {

    private final Store store;
    private final boolean ownsStore;
    private final Sleeper sleeper;
    private final SluiceListener listener;
    private final boolean listening;
    private volatile Rule rule;

    public DefaultRateLimiter(Rule rule, Store store, boolean ownsStore, Sleeper sleeper, SluiceListener listener) {
        this.rule = rule;
        this.store = store;
        this.ownsStore = ownsStore;
        this.sleeper = sleeper;
        this.listener = listener;
        this.listening = listener != SluiceListener.NONE;
    }

    public DefaultRateLimiter(Rule rule, Store store, boolean ownsStore, Sleeper sleeper) {
        this(rule, store, ownsStore, sleeper, SluiceListener.NONE);
    }

    /**
     * Every decision goes through here: the key's tier picks the rule that decides (or decides itself, for an
     * unlimited or blocked tier), and the listener hears of it with the limiter's rule, only when there is one.
     */
    private Decision decide(Rule r, String key, Request request) {
        Decision d;
        Tier tier = r.tierFor(key);
        if (tier == null) {
            d = store.decide(r, key, request);
        } else if (tier.kind() == Tier.Kind.LIMITS) {
            d = store.decide(r.ruleFor(key), key, request).withTier(tier.name());
        } else {
            d = tier.decide(request);
        }
        if (listening) {
            tell(r, key, d);
        }
        return d;
    }

    private CompletableFuture<Decision> decideAsync(Rule r, String key, Request request) {
        Tier tier = r.tierFor(key);
        CompletableFuture<Decision> f;
        if (tier == null) {
            f = store.decideAsync(r, key, request);
        } else if (tier.kind() == Tier.Kind.LIMITS) {
            f = store.decideAsync(r.ruleFor(key), key, request).thenApply(d -> d.withTier(tier.name()));
        } else {
            f = CompletableFuture.completedFuture(tier.decide(request));
        }
        return listening ? f.thenApply(d -> tell(r, key, d)) : f;
    }

    private Decision tell(Rule r, String key, Decision d) {
        try {
            listener.onDecision(r, key, d);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "listener " + listener + " failed on a decision; ignored", e);
        }
        return d;
    }

    private static final System.Logger LOG = System.getLogger(DefaultRateLimiter.class.getName());

    @Override
    public Rule rule() {
        return rule;
    }

    @Override
    public Decision tryAcquire(String key, long permits) {
        Rule r = rule;
        return decide(r, RateLimiter.checkKey(key), Request.tryAcquire(checkPermits(r, key, permits)));
    }

    @Override
    public Decision tryAcquireAll(List<String> keys, long permits) {
        Rule r = rule;
        Together t = together(r, keys, permits);
        Decision d = t.storeless != null ? t.storeless : store.decideTogether(t.targets, t.request);
        return finish(r, keys, t, d);
    }

    @Override
    public CompletableFuture<Decision> tryAcquireAllAsync(List<String> keys, long permits) {
        Rule r = rule;
        Together t = together(r, keys, permits);
        CompletableFuture<Decision> f = t.storeless != null ? CompletableFuture.completedFuture(t.storeless)
                : store.decideTogetherAsync(t.targets, t.request);
        return f.thenApply(d -> finish(r, keys, t, d));
    }

    /**
     * An all-or-nothing request through the keys' tiers: the store's targets (each key under the rule of its
     * tier), or the decision that needs no store (a key of a blocked tier rejects the whole request; keys all of
     * unlimited tiers need no store), and the tier every key fell under, if they share one.
     */
    private record Together(List<Store.Target> targets, Request request, Decision storeless, boolean namesTier,
                            String commonTier) {}

    private Together together(Rule r, List<String> keys, long permits) {
        if (keys == null || keys.isEmpty()) {
            throw new IllegalArgumentException("keys must hold at least one key");
        }
        List<Store.Target> targets = new ArrayList<>(keys.size());
        if (!r.hasTiers()) {
            for (String key : keys) {
                targets.add(new Store.Target(r, key));
            }
            return new Together(targets, Request.tryAcquire(checkPermits(r, permits)), null, false, null);
        }
        java.util.Set<String> tierNames = new java.util.HashSet<>();
        Tier blocked = null;
        Tier unlimited = null;
        for (String key : keys) {
            checkPermits(r, RateLimiter.checkKey(key), permits);
            Tier tier = r.tierFor(key);
            tierNames.add(tier == null ? "" : tier.name());
            if (tier != null && tier.kind() == Tier.Kind.BLOCKED) {
                blocked = blocked == null ? tier : blocked;
            } else if (tier != null && tier.kind() == Tier.Kind.UNLIMITED) {
                unlimited = tier;
            } else {
                targets.add(new Store.Target(r.ruleFor(key), key));
            }
        }
        Request request = Request.tryAcquire(permits);
        String common = tierNames.size() == 1 ? tierNames.iterator().next() : "";
        Decision storeless = blocked != null ? blocked.decide(request)
                : targets.isEmpty() ? unlimited.decide(request) : null;
        return new Together(targets, request, storeless, blocked == null, common.isEmpty() ? null : common);
    }

    /** Names the common tier; the listener hears the decision once per key: each key was decided (and charged) by it. */
    private Decision finish(Rule r, List<String> keys, Together t, Decision decided) {
        Decision d = t.namesTier ? decided.withTier(t.commonTier) : decided;
        if (listening) {
            keys.forEach(key -> tell(r, key, d));
        }
        return d;
    }

    @Override
    public Decision tryAcquireAtMost(String key, long permits) {
        return decide(rule, RateLimiter.checkKey(key), Request.tryAcquireAtMost(checkAtMost(permits)));
    }

    @Override
    public Decision reserve(String key, long permits, Duration maxWait) {
        Rule r = rule;
        return decide(r, RateLimiter.checkKey(key),
                Request.reserve(checkPermits(r, key, permits), checkMaxWait(maxWait)));
    }

    @Override
    public Decision peek(String key, long permits) {
        Rule r = rule;
        RateLimiter.checkKey(key);
        if (permits != 0) {
            checkPermits(r, key, permits);
        }
        return decide(r, key, Request.peek(permits));
    }

    @Override
    public Decision acquire(String key, long permits) throws InterruptedException {
        return acquire(key, permits, defaultMaxWait(rule));
    }

    @Override
    public Decision acquire(String key, long permits, Duration maxWait) throws InterruptedException {
        Rule r = rule;
        RateLimiter.checkKey(key);
        checkPermits(r, key, permits);
        long budget = checkMaxWait(maxWait);
        for (;;) {
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            Decision d = decide(rule, key, Request.reserve(permits, budget));
            if (d.allowed()) {
                sleeper.sleepMicros(d.waitMicros());
                return d;
            }
            // Rejected: a reserving limit's wait exceeded the budget, or a window/concurrency limit is full.
            // Poll the latter after its retry-after while the budget lasts; otherwise fail fast.
            long pause = d.retryAfterMicros();
            // A lockout is answered at once: sitting it out is the caller's choice, not a wait for a permit.
            if (pause > budget || pause == Arith.NEVER || d.lockedOut()) {
                return d;
            }
            pause = Math.max(pause, 1);
            sleeper.sleepMicros(pause);
            budget = budget == Long.MAX_VALUE ? budget : budget - pause;
        }
    }

    @Override
    public Charge tryCharge(String key, long estimate, Duration lifetime) {
        Rule r = rule;
        Charging c = charging(r, key, estimate, lifetime);
        Decision d = c.storeless != null ? c.storeless
                : c.tier(store.charge(c.rule, key, estimate, c.id, c.lifetimeMicros));
        return c.charge(listening ? tell(r, key, d) : d);
    }

    @Override
    public CompletableFuture<Charge> tryChargeAsync(String key, long estimate, Duration lifetime) {
        Rule r = rule;
        Charging c = charging(r, key, estimate, lifetime);
        CompletableFuture<Decision> f = c.storeless != null ? CompletableFuture.completedFuture(c.storeless)
                : store.chargeAsync(c.rule, key, estimate, c.id, c.lifetimeMicros).thenApply(c::tier);
        return f.thenApply(d -> c.charge(listening ? tell(r, key, d) : d));
    }

    @Override
    public Settlement settle(Ticket ticket, long actual) {
        checkTicket(ticket, actual);
        Rule r = rule.ruleFor(ticket.key());
        // A key of an unlimited or blocked tier was never charged in the store: there is nothing to settle.
        return r == null ? Settlement.unknown() : store.settle(r, ticket.key(), ticket.id(), actual);
    }

    @Override
    public CompletableFuture<Settlement> settleAsync(Ticket ticket, long actual) {
        checkTicket(ticket, actual);
        Rule r = rule.ruleFor(ticket.key());
        return r == null ? CompletableFuture.completedFuture(Settlement.unknown())
                : store.settleAsync(r, ticket.key(), ticket.id(), actual);
    }

    /**
     * A checked {@link #tryCharge}: the rule that decides the key (its tier's), the ticket id and lifetime, or the
     * decision of an unlimited or blocked tier, which needs no store.
     */
    private record Charging(Rule rule, Tier tierOfLimits, String key, long estimate, String id, long lifetimeMicros,
                            Decision storeless) {
        Decision tier(Decision d) {
            return tierOfLimits == null ? d : d.withTier(tierOfLimits.name());
        }

        Charge charge(Decision d) {
            return new Charge(d, d.allowed() ? new Ticket(id, key, estimate) : null);
        }
    }

    private static void checkTicket(Ticket ticket, long actual) {
        if (ticket == null) {
            throw new IllegalArgumentException("ticket must not be null");
        }
        Ticket.checkActual(actual);
    }

    private static Charging charging(Rule r, String key, long estimate, Duration lifetime) {
        RateLimiter.checkKey(key);
        long lifetimeMicros = Ticket.lifetimeMicros(lifetime);
        Rule decides = r.ruleFor(key);
        long max = decides == null ? Limit.MAX_COUNT : Math.min(decides.maxPermits(), Limit.MAX_COUNT);
        if (estimate < 1 || estimate > max) {
            throw new IllegalArgumentException("estimate must be in [1, " + max + "]"
                    + (decides == null ? "" : " for rule '" + decides.name() + "'") + ", was " + estimate);
        }
        Tier tier = r.tierFor(key);
        Decision storeless = decides == null ? tier.decide(Request.tryAcquire(estimate)) : null;
        return new Charging(decides, tier != null && decides != null ? tier : null, key, estimate, Ticket.newId(),
                lifetimeMicros, storeless);
    }

    @Override
    public boolean release(String key, long lease) {
        Rule r = rule.ruleFor(RateLimiter.checkKey(key));
        return r != null && store.release(r, key, lease);
    }

    /** Forgets the key under the rule's own limits and every tier's: a key that moved between tiers included. */
    @Override
    public void reset(String key) {
        RateLimiter.checkKey(key);
        for (Rule r : rule.stateRules()) {
            store.reset(r, key);
        }
    }

    @Override
    public synchronized void updateLimit(Limit limit) {
        if (limit == null) {
            throw new IllegalArgumentException("limit must not be null");
        }
        Rule r = rule;
        if (r.limit(limit.name()) == null && r.tiers().stream().noneMatch(t -> t.limits().stream()
                .anyMatch(l -> l.name().equals(limit.name())))) {
            throw new IllegalArgumentException("limit must name one of rule '" + r.name() + "''s limits "
                    + r.limits().stream().map(Limit::name).toList() + " or its tiers', was '" + limit.name() + "'");
        }
        rule = r.withLimit(limit);
    }

    @Override
    public CompletableFuture<Decision> tryAcquireAsync(String key, long permits) {
        Rule r = rule;
        return decideAsync(r, RateLimiter.checkKey(key), Request.tryAcquire(checkPermits(r, key, permits)));
    }

    @Override
    public CompletableFuture<Decision> tryAcquireAtMostAsync(String key, long permits) {
        return decideAsync(rule, RateLimiter.checkKey(key), Request.tryAcquireAtMost(checkAtMost(permits)));
    }

    @Override
    public CompletableFuture<Decision> reserveAsync(String key, long permits, Duration maxWait) {
        Rule r = rule;
        return decideAsync(r, RateLimiter.checkKey(key),
                Request.reserve(checkPermits(r, key, permits), checkMaxWait(maxWait)));
    }

    @Override
    public CompletableFuture<Decision> acquireAsync(String key, long permits, Duration maxWait) {
        Rule r = rule;
        RateLimiter.checkKey(key);
        checkPermits(r, key, permits);
        return acquireAsync(key, permits, checkMaxWait(maxWait));
    }

    private CompletableFuture<Decision> acquireAsync(String key, long permits, long budget) {
        return decideAsync(rule, key, Request.reserve(permits, budget)).thenCompose(d -> {
            if (d.allowed()) {
                return after(d.waitMicros()).thenApply(x -> d);
            }
            long pause = d.retryAfterMicros();
            // A lockout is answered at once: sitting it out is the caller's choice, not a wait for a permit.
            if (pause > budget || pause == Arith.NEVER || d.lockedOut()) {
                return CompletableFuture.completedFuture(d);
            }
            long p = Math.max(pause, 1);
            long rest = budget == Long.MAX_VALUE ? budget : budget - p;
            return after(p).thenCompose(x -> acquireAsync(key, permits, rest));
        });
    }

    private static CompletableFuture<Void> after(long micros) {
        if (micros <= 0) {
            return CompletableFuture.completedFuture(null);
        }
        Executor delayed = CompletableFuture.delayedExecutor(micros, TimeUnit.MICROSECONDS);
        return CompletableFuture.runAsync(() -> { }, delayed);
    }

    @Override
    public CompletableFuture<Decision> peekAsync(String key, long permits) {
        Rule r = rule;
        RateLimiter.checkKey(key);
        if (permits != 0) {
            checkPermits(r, key, permits);
        }
        return decideAsync(r, key, Request.peek(permits));
    }

    @Override
    public CompletableFuture<Boolean> releaseAsync(String key, long lease) {
        Rule r = rule.ruleFor(RateLimiter.checkKey(key));
        return r == null ? CompletableFuture.completedFuture(false) : store.releaseAsync(r, key, lease);
    }

    @Override
    public void close() {
        if (ownsStore) {
            store.close();
        }
    }

    /**
     * Permits in range for the rule that decides {@code key}: its tier's, whose limits may allow more (or fewer)
     * than the rule's own; an unlimited or blocked tier takes up to {@link Limit#MAX_COUNT}.
     */
    private static long checkPermits(Rule rule, String key, long permits) {
        if (!rule.hasTiers()) {
            return checkPermits(rule, permits);
        }
        Rule decides = rule.ruleFor(key);
        if (decides == null) {
            return checkAtMost(permits);
        }
        Tier tier = rule.tierFor(key);
        try {
            return checkPermits(decides, permits);
        } catch (IllegalArgumentException e) {
            throw tier == null ? e : new IllegalArgumentException(e.getMessage().replace("for rule '" + decides.name()
                    + "'", "for tier '" + tier.name() + "' of rule '" + rule.name() + "'"), e);
        }
    }

    private static long checkPermits(Rule rule, long permits) {
        long max = Math.min(rule.maxPermits(), Limit.MAX_COUNT);
        if (permits < 1 || permits > max) {
            throw new IllegalArgumentException("permits must be in [1, " + max + "] for rule '" + rule.name()
                    + "', was " + permits);
        }
        return permits;
    }

    private static long checkAtMost(long permits) {
        if (permits < 1 || permits > Limit.MAX_COUNT) {
            throw new IllegalArgumentException("permits must be in [1, " + Limit.MAX_COUNT + "], was " + permits);
        }
        return permits;
    }

    private static long checkMaxWait(Duration maxWait) {
        if (maxWait == null || maxWait.isNegative()) {
            throw new IllegalArgumentException("maxWait must be a non-negative duration, was " + maxWait);
        }
        if (maxWait.compareTo(FOREVER) >= 0) {
            return Long.MAX_VALUE;
        }
        return maxWait.toNanos() / 1_000;
    }

    /** Durations this long or longer mean "wait as long as it takes". */
    private static final Duration FOREVER = Duration.ofDays(365L * 1000);

    private static Duration defaultMaxWait(Rule rule) {
        Duration min = null;
        for (Limit l : rule.limits()) {
            if (l instanceof RefreshPeriod rp && (min == null || rp.timeout().compareTo(min) < 0)) {
                min = rp.timeout();
            }
        }
        return min == null ? FOREVER : min;
    }
}
