package io.sluice.redis.internal;

import io.sluice.Limit;
import io.sluice.Rule;
import java.util.List;

/**
 * A rule resolved once for the script: each limit's algorithm, parameter words and escaped name. Immutable.
 */
final class RedisRule {

    private final Rule rule;
    private final String[] algorithms;
    private final String[] params;
    private final String[] limitNames;

    private RedisRule(Rule rule) {
        this.rule = rule;
        List<Limit> limits = rule.limits();
        int n = limits.size();
        this.algorithms = new String[n];
        this.params = new String[n];
        this.limitNames = new String[n];
        for (int i = 0; i < n; i++) {
            Limit limit = limits.get(i);
            algorithms[i] = limit.algorithm();
            params[i] = LimitParams.encode(limit);
            limitNames[i] = limit.name();
        }
    }

    /**
     * Resolves {@code rule} against the script.
     *
     * @throws IllegalArgumentException when a limit's algorithm has no Lua port in {@code script}
     */
    static RedisRule compile(Rule rule, SluiceScript script) {
        for (Limit limit : rule.limits()) {
            if (!script.supports(limit.algorithm())) {
                throw new IllegalArgumentException("algorithm " + limit.algorithm() + " has no Redis script yet (limit '"
                        + limit.name() + "' of rule '" + rule.name() + "'); the Redis store runs "
                        + script.algorithms().stream().sorted().toList());
            }
        }
        return new RedisRule(rule);
    }

    Rule rule() {
        return rule;
    }

    int size() {
        return algorithms.length;
    }

    String algorithm(int i) {
        return algorithms[i];
    }

    String params(int i) {
        return params[i];
    }

    String limitName(int i) {
        return limitNames[i];
    }

    /** The state key of each limit on {@code key}, in limit order. */
    String[] stateKeys(KeyLayout layout, String key) {
        String base = layout.base(rule.name(), key);
        String[] keys = new String[limitNames.length];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = base + ":" + KeyLayout.escape(limitNames[i]);
        }
        return keys;
    }
}
