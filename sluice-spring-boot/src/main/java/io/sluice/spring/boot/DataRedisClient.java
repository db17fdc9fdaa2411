package io.sluice.spring.boot;

import io.lettuce.core.AbstractRedisClient;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/** The Lettuce client behind spring-boot-starter-data-redis; loaded only when Spring Data Redis is present. */
final class DataRedisClient {

    private DataRedisClient() {}

    /** The application's native Lettuce client, or null when it has no Lettuce connection factory. */
    static AbstractRedisClient of(BeanFactory beans) {
        LettuceConnectionFactory factory = beans.getBeanProvider(LettuceConnectionFactory.class).getIfUnique();
        if (factory == null) {
            return null;
        }
        // The factory creates its client when started; Spring starts it early by default, but a factory
        // configured for late start-up would not have one yet.
        if (!factory.isRunning()) {
            factory.start();
        }
        return factory.getNativeClient();
    }
}
