package io.sluice.spring.boot;

import io.sluice.Decision;
import io.sluice.Rule;

/**
 * A call or request was over its rule's limit: thrown by {@link RateLimited} methods, answered with 429 by the
 * MVC and WebFlux exception handler Sluice installs (an application's own handler for it takes precedence). The
 * decision says which limit rejected and when to retry.
 */
public class RateLimitExceededException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final transient Rule rule;
    private final transient Decision decision;

    public RateLimitExceededException(Rule rule, Decision decision) {
        super("rate limit exceeded: rule '" + rule.name() + "', limit '" + decision.limit() + "'"
                + (decision.retryAfterMicros() == Long.MAX_VALUE ? ""
                        : ", retry after " + decision.retryAfterSeconds() + " s"), null, false, false);
        this.rule = rule;
        this.decision = decision;
    }

    /** The rule that rejected the call. */
    public Rule rule() {
        return rule;
    }

    /** The rejection: the limit, its remaining permits, the retry-after. */
    public Decision decision() {
        return decision;
    }
}
