package io.sluice.spring.boot;

import io.sluice.spring.boot.web.ReactiveRateLimitExceptionHandler;
import io.sluice.spring.boot.web.RouteTable;
import io.sluice.spring.boot.web.SluiceWebFilter;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;

/**
 * In a reactive web application: the {@code WebFilter} of {@code sluice.web.routes} and the 429 handler of
 * {@link RateLimitExceededException} for WebFlux.
 */
@AutoConfiguration(after = SluiceAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnClass(name = {"org.springframework.web.server.WebFilter", "reactor.core.publisher.Mono"})
public class SluiceWebFluxAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnProperty(prefix = "sluice.web", name = "enabled", matchIfMissing = true)
    public SluiceWebFilter sluiceWebFilter(SluiceProperties properties, RateLimiterRegistry registry) {
        SluiceProperties.Web web = properties.getWeb();
        return new SluiceWebFilter(RouteTable.compile(web, registry), web.isAdmittedHeaders(),
                web.getTrustedProxies(), web.getFilterOrder());
    }

    @Bean
    @ConditionalOnMissingBean
    public ReactiveRateLimitExceptionHandler sluiceReactiveRateLimitExceptionHandler() {
        return new ReactiveRateLimitExceptionHandler();
    }
}
