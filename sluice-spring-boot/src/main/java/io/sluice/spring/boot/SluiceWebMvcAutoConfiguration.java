package io.sluice.spring.boot;

import io.sluice.spring.boot.web.MvcRateLimitExceptionHandler;
import io.sluice.spring.boot.web.RouteTable;
import io.sluice.spring.boot.web.SluiceServletFilter;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;

/**
 * In a servlet web application: the filter of {@code sluice.web.routes} (registered only when there are routes;
 * the routes are checked either way) and the 429 handler of {@link RateLimitExceededException} for Spring MVC.
 */
@AutoConfiguration(after = SluiceAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(name = {"jakarta.servlet.Filter", "org.springframework.web.filter.OncePerRequestFilter"})
public class SluiceWebMvcAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(name = "sluiceServletFilter")
    @ConditionalOnProperty(prefix = "sluice.web", name = "enabled", matchIfMissing = true)
    public FilterRegistrationBean<SluiceServletFilter> sluiceServletFilter(SluiceProperties properties,
                                                                         RateLimiterRegistry registry) {
        SluiceProperties.Web web = properties.getWeb();
        RouteTable routes = RouteTable.compile(web, registry);
        FilterRegistrationBean<SluiceServletFilter> registration = new FilterRegistrationBean<>(
                new SluiceServletFilter(routes, web.isAdmittedHeaders(), web.getTrustedProxies()));
        registration.setName("sluiceServletFilter");
        registration.setOrder(web.getFilterOrder());
        registration.setEnabled(!routes.isEmpty());
        return registration;
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnClass(name = "org.springframework.web.servlet.DispatcherServlet")
    public MvcRateLimitExceptionHandler sluiceMvcRateLimitExceptionHandler() {
        return new MvcRateLimitExceptionHandler();
    }
}
