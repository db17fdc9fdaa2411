package io.sluice.internal;

import io.sluice.Decision;
import io.sluice.Limit;
import io.sluice.Request;
import io.sluice.Tier;
import io.sluice.internal.algorithm.Arith;

/**
 * The decisions of unlimited and blocked {@link Tier}s, made without a store: nothing is counted for such keys,
 * so nothing needs asking. Both name the tier as their {@link Decision#limit()} and {@link Decision#tier()}.
 */
public final class TierDecisions {

    private TierDecisions() {}

    /**
     * The decision of {@code tier} (unlimited or blocked) for {@code request}: an unlimited tier admits every
     * permit asked for (none for a peek) and reports {@link Limit#MAX_COUNT} remaining; a blocked tier rejects
     * with a retry-after of "never".
     */
    public static Decision decide(Tier tier, Request request) {
        return switch (tier.kind()) {
            case UNLIMITED -> new Decision(true, request.op() == Request.Op.PEEK ? 0 : request.permits(),
                    Limit.MAX_COUNT, 0, 0, 0, tier.name(), Decision.NO_LEASE).withTier(tier.name());
            case BLOCKED -> new Decision(false, 0, 0, Arith.NEVER, 0, 0, tier.name(), Decision.NO_LEASE)
                    .withTier(tier.name());
            case LIMITS -> throw new IllegalArgumentException("tier '" + tier.name() + "' has limits: its rule"
                    + " decides, not the tier");
        };
    }
}
