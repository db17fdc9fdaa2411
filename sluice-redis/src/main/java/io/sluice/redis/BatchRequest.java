package io.sluice.redis;

import io.sluice.Limit;
import io.sluice.RateLimiter;
import io.sluice.Request;
import io.sluice.Rule;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * One entry of {@link RedisStore#decideAll}: a request decided under every limit of one or more
 * (rule, key) targets. With several targets the request passes only if every limit of every target passes;
 * see {@link RedisStore#decideAll} for when that is atomic. Validated like {@link RateLimiter}'s arguments.
 * Immutable.
 *
 * @param targets the (rule, key) pairs, at least one, no pair twice
 * @param request what to decide for them
 */
public record BatchRequest(List<Target> targets, Request request) {

    /** A rule applied to a key. */
    public record Target(Rule rule, String key) {

        /** @throws IllegalArgumentException for a null rule or an invalid key */
        public Target {
            if (rule == null) {
                throw new IllegalArgumentException("rule must not be null");
            }
            RateLimiter.checkKey(key);
        }
    }

    /**
     * @throws IllegalArgumentException when there is no target, a target appears twice (same rule name and
     *                                  key), the permits exceed what a target's rule can ever grant, or one of
     *                                  several targets' rule has a lockout
     */
    public BatchRequest {
        if (targets == null || targets.isEmpty()) {
            throw new IllegalArgumentException("targets must hold at least one (rule, key)");
        }
        if (request == null) {
            throw new IllegalArgumentException("request must not be null");
        }
        targets = List.copyOf(targets);
        Set<List<String>> seen = new HashSet<>();
        for (Target t : targets) {
            if (!seen.add(List.of(t.rule().name(), t.key()))) {
                throw new IllegalArgumentException("targets must be distinct; rule '" + t.rule().name() + "' on key '"
                        + t.key() + "' appears twice");
            }
            checkPermits(t.rule(), request);
            if (targets.size() > 1 && t.rule().lockout() != null) {
                // As the in-memory store: whose rejections would count, and whom a lockout would reject, has no
                // one answer for several targets.
                throw new IllegalArgumentException("rule '" + t.rule().name()
                        + "' has a lockout: it cannot be decided together with other targets");
            }
        }
    }

    /** {@code request} for {@code key} under {@code rule}: what {@link RedisStore#decide} does. */
    public static BatchRequest of(Rule rule, String key, Request request) {
        return new BatchRequest(List.of(new Target(rule, key)), request);
    }

    /** {@code request} for several targets at once, all or nothing. */
    public static BatchRequest allOf(Request request, Target... targets) {
        return new BatchRequest(targets == null ? List.of() : List.of(targets), request);
    }

    /** The same bound {@link RateLimiter} puts on all-or-nothing operations. */
    private static void checkPermits(Rule rule, Request request) {
        if (request.op() == Request.Op.TRY_AT_MOST || request.permits() == 0) {
            return;
        }
        long max = Math.min(rule.maxPermits(), Limit.MAX_COUNT);
        if (request.permits() > max) {
            throw new IllegalArgumentException("permits must be in [1, " + max + "] for rule '" + rule.name()
                    + "', was " + request.permits());
        }
    }
}
