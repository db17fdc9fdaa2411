package io.sluice.spring.boot;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.springframework.aop.Pointcut;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.ComposablePointcut;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Proxies beans with {@link RateLimited} methods (as Spring's {@code @Async} and {@code @Validated} support do,
 * without needing AspectJ), and checks every annotation once all singletons exist, so an unknown rule or a
 * malformed expression stops the application at start-up rather than at the first call.
 */
final class RateLimitedPostProcessor extends AbstractBeanFactoryAwareAdvisingPostProcessor
        implements SmartInitializingSingleton {

    private static final long serialVersionUID = 1L;

    private final transient RateLimitedInterceptor interceptor;
    private final transient List<Class<?>> annotated = new ArrayList<>();

    RateLimitedPostProcessor(Supplier<RateLimiterRegistry> registry) {
        this.interceptor = new RateLimitedInterceptor(registry);
        Pointcut pointcut = new ComposablePointcut(new AnnotationMatchingPointcut(RateLimited.class, true))
                .union(new AnnotationMatchingPointcut(null, RateLimited.class, true));
        this.advisor = new DefaultPointcutAdvisor(pointcut, interceptor);
        setBeforeExistingAdvisors(true);
        setProxyTargetClass(true);
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        Object result = super.postProcessAfterInitialization(bean, beanName);
        if (result != bean || AopUtils.isAopProxy(result)) {
            Class<?> type = AopUtils.getTargetClass(bean);
            if (AopUtils.canApply(advisor, type)) {
                synchronized (annotated) {
                    annotated.add(type);
                }
            }
        }
        return result;
    }

    @Override
    public void afterSingletonsInstantiated() {
        List<Class<?>> types;
        synchronized (annotated) {
            types = List.copyOf(annotated);
        }
        for (Class<?> type : types) {
            boolean classLevel = AnnotatedElementUtils.hasAnnotation(type, RateLimited.class);
            ReflectionUtils.doWithMethods(type, (Method m) -> interceptor.plan(m, type),
                    m -> AnnotatedElementUtils.hasAnnotation(m, RateLimited.class)
                            || (classLevel && java.lang.reflect.Modifier.isPublic(m.getModifiers())
                                && m.getDeclaringClass() != Object.class));
        }
    }
}
