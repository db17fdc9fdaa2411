package io.sluice.spring.boot;

import io.sluice.Rule;
import io.sluice.SluiceListener;
import io.sluice.Store;
import java.util.Map;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.core.io.ResourceLoader;
import org.springframework.util.ClassUtils;

/**
 * Sluice's core beans: the {@link Store} (memory, or Redis with {@code sluice.store=redis}), the
 * {@link RateLimiterRegistry} of the configured rules, and the post-processor behind {@link RateLimited}. Each
 * backs off when the application defines its own bean of that type. Every {@link SluiceListener} bean (Sluice's
 * Micrometer meters among them) is told of the store's and the limiters' events.
 */
@AutoConfiguration
@EnableConfigurationProperties(SluiceProperties.class)
public class SluiceAutoConfiguration {

    private static final String REDIS_STORE = "io.sluice.redis.RedisStore";

    @Bean
    @ConditionalOnMissingBean(Store.class)
    public Store sluiceStore(SluiceProperties properties, ObjectProvider<SluiceListener> listeners,
                             BeanFactory beans) {
        if (properties.getStore() == SluiceProperties.StoreType.MEMORY) {
            return Store.memory().build();
        }
        if (!ClassUtils.isPresent(REDIS_STORE, getClass().getClassLoader())) {
            throw new SluiceConfigurationException("sluice.store", "redis needs io.sluice:sluice-redis on the "
                    + "class path (the sluice-spring-boot-starter brings it)");
        }
        return RedisStoreFactory.create(properties.getRedis(), CompositeListener.of(listeners.orderedStream()
                .toList()), beans);
    }

    @Bean
    @ConditionalOnMissingBean(RateLimiterRegistry.class)
    public RateLimiterRegistry sluiceRateLimiterRegistry(SluiceProperties properties, Store store,
                                                         ResourceLoader resources,
                                                         ObjectProvider<SluiceListener> listeners) {
        Map<String, Rule> rules = RuleCatalog.load(properties, resources);
        return new DefaultRateLimiterRegistry(rules, store, CompositeListener.of(listeners.orderedStream().toList()));
    }

    /** Static, so that creating it does not create this configuration (and its beans) early. */
    @Bean
    @ConditionalOnMissingBean
    public static RateLimitedPostProcessor sluiceRateLimitedPostProcessor(
            ObjectProvider<RateLimiterRegistry> registry) {
        return new RateLimitedPostProcessor(registry::getObject);
    }
}
