package io.sluice.spring.boot.actuate;

import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.SluiceListener.BreakerState;
import io.sluice.Store;
import io.sluice.redis.RedisStore;
import java.time.Duration;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * Health of the store: an in-memory store is always up; a Redis store is up when a peek (one script call that
 * charges nothing, on a key of its own) is answered and its circuit breaker is closed. An open breaker is down
 * without calling Redis; a half-open one lets the peek through. Details: the store kind and the breaker state.
 */
public class SluiceHealthIndicator extends AbstractHealthIndicator {

    /** The peek's rule: any rule works, since a peek charges nothing; the name keeps its (expiring) key apart. */
    private static final Rule PROBE = Rule.of("sluice-health", FixedWindow.of(1, Duration.ofSeconds(1)));

    private final Store store;

    public SluiceHealthIndicator(Store store) {
        super("Sluice store health check failed");
        this.store = store;
    }

    private static final boolean REDIS = org.springframework.util.ClassUtils.isPresent("io.sluice.redis.RedisStore",
            SluiceHealthIndicator.class.getClassLoader());

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        if (REDIS && RedisCheck.isRedis(store)) {
            RedisCheck.check((RedisStore) store, builder);
        } else {
            builder.up().withDetail("store", store.getClass().getSimpleName());
        }
    }

    /** The Redis part, in a class of its own so that it is loaded only when sluice-redis is present. */
    private static final class RedisCheck {

        static boolean isRedis(Store store) {
            return store instanceof RedisStore;
        }

        static void check(RedisStore redis, Health.Builder builder) {
        BreakerState breaker = redis.breakerState();
        builder.withDetail("store", "redis").withDetail("breaker", breaker.name().toLowerCase(java.util.Locale.ROOT));
        if (breaker == BreakerState.OPEN) {
            builder.down();
            return;
        }
        Decision d = redis.decide(PROBE, "probe", Request.peek(0));
        if (d.source().degraded()) {
            builder.down().withDetail("decidedBy", d.source().name().toLowerCase(java.util.Locale.ROOT));
        } else {
            builder.up();
        }
        }
    }
}
