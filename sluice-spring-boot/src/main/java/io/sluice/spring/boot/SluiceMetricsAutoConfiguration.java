package io.sluice.spring.boot;

import io.micrometer.core.instrument.MeterRegistry;
import io.sluice.micrometer.SluiceMetrics;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Sluice's Micrometer meters ({@code sluice.limiter.decisions}, {@code sluice.store.calls},
 * {@code sluice.breaker.*}, ...; see {@link SluiceMetrics}) on the application's {@link MeterRegistry}, when it
 * has one and sluice-micrometer is on the class path.
 */
@AutoConfiguration(before = SluiceAutoConfiguration.class, afterName = {
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration"})
@ConditionalOnClass({MeterRegistry.class, SluiceMetrics.class})
@ConditionalOnBean(MeterRegistry.class)
public class SluiceMetricsAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    public SluiceMetrics sluiceMetrics(MeterRegistry registry) {
        return new SluiceMetrics(registry);
    }
}
