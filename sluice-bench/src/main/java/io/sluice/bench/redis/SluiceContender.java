package io.sluice.bench.redis;

import io.sluice.Decision;
import io.sluice.Mode;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.redis.RedisStore;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * Sluice's Redis store through the public facade, in one {@link Mode}: exact ("plain", one EVALSHA per decision),
 * coalesced, leased or synced.
 */
final class SluiceContender implements RedisContender {
    private final String algorithm;
    private final Mode mode;
    private final RedisLimits limits;
    private final RedisStore store;
    private final RateLimiter limiter;
    /** Whether the store answers denials it has just learned locally (RedisStore.Builder.cacheDenials). */
    private final boolean cacheDenials;
    /** Whether the rule has three limits ({@link RedisLimits#threeLimits}) instead of one. */
    private final boolean threeLimits;

    /**
     * Exact mode with cached denials off: the load rows measure one script call per decision (the cache would
     * answer most of the hot key's denials; {@link RedisAttackSuite} measures it).
     */
    SluiceContender(String uri, String algorithm, RedisLimits limits, Duration timeout) {
        this(uri, algorithm, Mode.exact(), limits, timeout);
    }

    SluiceContender(String uri, String algorithm, Mode mode, RedisLimits limits, Duration timeout) {
        this(uri, algorithm, mode, limits, timeout, false);
    }

    /** In exact mode or {@code mode}, with cached denials on or off (RedisStore.Builder.cacheDenials). */
    SluiceContender(String uri, String algorithm, Mode mode, RedisLimits limits, Duration timeout,
                    boolean cacheDenials) {
        this(RedisStore.builder().uri(uri).timeout(timeout).cacheDenials(cacheDenials).build(), algorithm, mode,
                limits, cacheDenials, false);
    }

    /**
     * Exact mode, cached denials off, on a rule of three limits ({@link RedisLimits#threeLimits}): what a rule of
     * several limits costs against a rule of one in the same run.
     */
    static SluiceContender threeLimits(String uri, String algorithm, RedisLimits limits, Duration timeout) {
        return new SluiceContender(RedisStore.builder().uri(uri).timeout(timeout).cacheDenials(false).build(),
                algorithm, Mode.exact(), limits, false, true);
    }

    /** On {@code store}, which this contender closes. */
    SluiceContender(RedisStore store, String algorithm, RedisLimits limits) {
        this(store, algorithm, Mode.exact(), limits, true, false);
    }

    private SluiceContender(RedisStore store, String algorithm, Mode mode, RedisLimits limits, boolean cacheDenials,
                            boolean threeLimits) {
        this.algorithm = algorithm;
        this.mode = mode;
        this.limits = limits;
        this.store = store;
        this.cacheDenials = cacheDenials;
        this.threeLimits = threeLimits;
        Rule rule = threeLimits ? Rule.of("bench", limits.threeLimits(algorithm))
                : Rule.of("bench", limits.sluice(algorithm));
        this.limiter = RateLimiter.builder(rule.withMode(mode)).store(store).build();
    }

    /** The variant of the rows on a rule of three limits, and its name in {@code algorithm/three_limits}. */
    static final String THREE_LIMITS = "three_limits";

    /** A mode by its rule-file name, with its defaults (synced: every 100 ms; leased: 500 ms leases). */
    static Mode mode(String name) {
        return switch (name) {
            case "plain", "exact" -> Mode.exact();
            case "coalesced" -> Mode.coalesced();
            case "leased" -> Mode.leased();
            case "synced" -> Mode.synced(Mode.DEFAULT_SYNC_INTERVAL);
            default -> throw new IllegalArgumentException("unknown Sluice mode " + name
                    + "; expected plain, coalesced, leased or synced");
        };
    }

    @Override
    public String system() {
        return "sluice";
    }

    @Override
    public String variant() {
        if (threeLimits) {
            return THREE_LIMITS;
        }
        return mode.kind() == Mode.Kind.EXACT ? "plain" : mode.name();
    }

    /** Whether the store answers denials it has just learned without asking Redis. */
    boolean cachesDenials() {
        return cacheDenials;
    }

    @Override
    public String algorithm() {
        return algorithm;
    }

    @Override
    public String config() {
        return limits.describe(algorithm) + (threeLimits ? " and two looser limits (per minute, per hour)" : "")
                + (mode.kind() == Mode.Kind.EXACT ? "" : ", mode " + mode)
                + (cacheDenials ? "" : ", cached denials off");
    }

    @Override
    public boolean tryAcquire(String key) {
        return limiter.tryAcquire(key).allowed();
    }

    @Override
    public CompletableFuture<Boolean> tryAcquireAsync(String key) {
        return limiter.tryAcquireAsync(key, 1).thenApply(Decision::allowed);
    }

    @Override
    public long admissionBound(long micros) {
        return limits.sluiceBound(algorithm, micros);
    }

    @Override
    public void close() {
        limiter.close();
        store.close();
    }
}
