package io.sluice.spring.boot;

import io.sluice.Store;
import io.sluice.spring.boot.actuate.SluiceEndpoint;
import io.sluice.spring.boot.actuate.SluiceHealthIndicator;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** With Spring Boot Actuator: the {@code sluice} endpoint and the {@code sluice} health indicator. */
@AutoConfiguration(after = SluiceAutoConfiguration.class)
@ConditionalOnClass(name = "org.springframework.boot.actuate.endpoint.annotation.Endpoint")
public class SluiceActuatorAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnAvailableEndpoint
    public SluiceEndpoint sluiceEndpoint(RateLimiterRegistry registry) {
        return new SluiceEndpoint(registry);
    }

    /** The health indicator, when Spring Boot's health support is present. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
    static class Health {

        @Bean
        @ConditionalOnMissingBean(name = "sluiceHealthIndicator")
        @ConditionalOnEnabledHealthIndicator("sluice")
        public SluiceHealthIndicator sluiceHealthIndicator(Store store) {
            return new SluiceHealthIndicator(store);
        }
    }
}
