package io.sluice.spring.boot;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.resource.ClientResources;
import io.sluice.SluiceListener;
import io.sluice.redis.RedisStore;
import io.sluice.redis.RedisStoreException;
import io.sluice.redis.Scripting;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.util.ClassUtils;

/**
 * Builds the Redis store from {@code sluice.redis.*}. Loaded only when sluice-redis is on the class path.
 *
 * <p>Which client: with {@code sluice.redis.uri} set, a client of the store's own, on the application's
 * {@link ClientResources} bean when there is one (so no second set of event loops); without it, the
 * application's own Lettuce client from spring-boot-starter-data-redis (its {@code spring.data.redis.*}
 * connection), unless {@code sluice.redis.use-application-client=false}.
 */
final class RedisStoreFactory {

    private static final String DATA_REDIS_FACTORY =
            "org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory";

    private RedisStoreFactory() {}

    static RedisStore create(SluiceProperties.Redis p, SluiceListener listener, BeanFactory beans) {
        RedisStore.Builder b = RedisStore.builder().listener(listener);
        configure("sluice.redis.prefix", () -> b.prefix(p.getPrefix()));
        configure("sluice.redis.timeout", () -> b.timeout(p.getTimeout()));
        configure("sluice.redis.scripting", () -> b.scripting(Scripting.parse("sluice.redis.scripting",
                p.getScripting())));
        configure("sluice.redis.breaker", () -> b.circuitBreaker(p.getBreaker().getFailures(),
                p.getBreaker().getCoolDown()));
        String where;
        if (p.getUri() != null && !p.getUri().isBlank()) {
            configure("sluice.redis.uri", () -> b.uri(p.getUri()).cluster(p.isCluster()));
            ClientResources resources = beans.getBeanProvider(ClientResources.class).getIfUnique();
            if (resources != null) {
                b.clientResources(resources);
            }
            where = "sluice.redis.uri";
        } else {
            AbstractRedisClient client = p.isUseApplicationClient() ? applicationClient(beans) : null;
            if (client == null) {
                throw new SluiceConfigurationException("sluice.redis.uri", "required when sluice.store=redis, "
                        + "unless spring-boot-starter-data-redis provides a Lettuce client "
                        + "(and sluice.redis.use-application-client is true)");
            }
            if (client instanceof RedisClusterClient c) {
                b.client(c);
            } else {
                b.client((RedisClient) client);
            }
            where = "spring.data.redis (the application's Lettuce client)";
        }
        try {
            return b.build();
        } catch (RedisStoreException e) {
            throw new SluiceConfigurationException(where.startsWith("sluice") ? where : "sluice.store",
                    "cannot reach Redis through " + where + ": " + e.getMessage(), e);
        } catch (IllegalArgumentException e) {
            throw new SluiceConfigurationException(where.startsWith("sluice") ? where : "sluice.store",
                    e.getMessage(), e);
        }
    }

    private static void configure(String property, Runnable setter) {
        try {
            setter.run();
        } catch (IllegalArgumentException e) {
            throw new SluiceConfigurationException(property, e.getMessage(), e);
        }
    }

    private static AbstractRedisClient applicationClient(BeanFactory beans) {
        if (!ClassUtils.isPresent(DATA_REDIS_FACTORY, RedisStoreFactory.class.getClassLoader())) {
            return null;
        }
        return DataRedisClient.of(beans);
    }
}
