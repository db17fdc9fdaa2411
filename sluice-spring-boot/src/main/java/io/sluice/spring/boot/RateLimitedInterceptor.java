package io.sluice.spring.boot;

import io.sluice.Decision;
import io.sluice.RateLimiter;
import io.sluice.rules.Durations;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Supplier;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.aop.support.AopUtils;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.util.ClassUtils;

/**
 * Applies {@link RateLimited}: decides each call before the method runs. Plain methods decide on the caller's
 * thread ({@link RateLimiter#tryAcquire}, or {@link RateLimiter#acquire} with a maximum wait); methods returning
 * {@link CompletionStage}/{@link CompletableFuture}, {@code Mono} or {@code Flux} decide asynchronously
 * ({@link RateLimiter#tryAcquireAsync} / {@link RateLimiter#acquireAsync}) and call the method when the decision
 * is in, so no thread waits. When the decision arrives from another thread (Redis' event loop, a wait's
 * timer), the method is called on the common fork-join pool (futures) or Reactor's parallel scheduler, never
 * on Lettuce's I/O threads. Thread-safe.
 */
final class RateLimitedInterceptor implements MethodInterceptor {

    private static final boolean REACTOR = ClassUtils.isPresent("reactor.core.publisher.Mono",
            RateLimitedInterceptor.class.getClassLoader());
    private static final SpelExpressionParser SPEL = new SpelExpressionParser();
    private static final ParameterNameDiscoverer NAMES = new DefaultParameterNameDiscoverer();

    private final Supplier<RateLimiterRegistry> registry;
    private final ConcurrentMap<Method, Plan> plans = new ConcurrentHashMap<>();

    RateLimitedInterceptor(Supplier<RateLimiterRegistry> registry) {
        this.registry = registry;
    }

    /** How calls of one method are limited, compiled once. */
    record Plan(String where, RateLimiter limiter, Expression key, String constantKey, Expression permits,
                Duration maxWait, Kind kind) {}

    enum Kind { PLAIN, FUTURE, MONO, FLUX }

    /**
     * The plan for a method, checking the annotation: the rule exists, the expressions parse, the wait is a
     * duration.
     *
     * @throws SluiceConfigurationException naming the method and the attribute at fault
     */
    Plan plan(Method method, Class<?> targetClass) {
        Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
        return plans.computeIfAbsent(specific, m -> compile(m, targetClass));
    }

    private Plan compile(Method method, Class<?> targetClass) {
        RateLimited a = AnnotatedElementUtils.findMergedAnnotation(method, RateLimited.class);
        if (a == null) {
            a = AnnotatedElementUtils.findMergedAnnotation(targetClass, RateLimited.class);
        }
        String where = "@RateLimited on " + ClassUtils.getQualifiedMethodName(method, targetClass);
        RateLimiterRegistry r = registry.get();
        String rule = a.rule();
        RateLimiter limiter = r.find(rule).orElseThrow(() -> new SluiceConfigurationException(where + " rule",
                "no rule '" + rule + "'; rules are " + r.limiters().keySet()));
        Expression key = a.key().isBlank() ? null : parse(where + " key", a.key());
        Expression permits = a.permits().trim().equals("1") ? null : parse(where + " permits", a.permits());
        Duration maxWait;
        try {
            maxWait = Durations.parse(a.maxWait());
        } catch (IllegalArgumentException e) {
            throw new SluiceConfigurationException(where + " maxWait", e.getMessage());
        }
        if (maxWait.isNegative()) {
            throw new SluiceConfigurationException(where + " maxWait", "must not be negative, was " + a.maxWait());
        }
        return new Plan(where, limiter, key, ClassUtils.getQualifiedMethodName(method, targetClass), permits, maxWait,
                kind(method.getReturnType()));
    }

    private static Kind kind(Class<?> type) {
        if (CompletionStage.class.isAssignableFrom(type)) {
            return Kind.FUTURE;
        }
        if (REACTOR && Reactive.isMono(type)) {
            return Kind.MONO;
        }
        if (REACTOR && Reactive.isFlux(type)) {
            return Kind.FLUX;
        }
        return Kind.PLAIN;
    }

    private static Expression parse(String where, String text) {
        try {
            return SPEL.parseExpression(text);
        } catch (ParseException e) {
            throw new SluiceConfigurationException(where, "not a valid expression '" + text + "': " + e.getMessage());
        }
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        Object target = invocation.getThis();
        Class<?> targetClass = target == null ? invocation.getMethod().getDeclaringClass()
                : AopUtils.getTargetClass(target);
        Plan plan = plan(invocation.getMethod(), targetClass);
        MethodBasedEvaluationContext context = new MethodBasedEvaluationContext(target, invocation.getMethod(),
                invocation.getArguments(), NAMES);
        String key = key(plan, context);
        long permits = permits(plan, context);
        RateLimiter limiter = plan.limiter();
        switch (plan.kind()) {
            case FUTURE:
                return future(plan, invocation, decideAsync(limiter, key, permits, plan.maxWait()));
            case MONO:
                return Reactive.mono(plan, callLater(invocation), () -> decideAsync(limiter, key, permits,
                        plan.maxWait()));
            case FLUX:
                return Reactive.flux(plan, callLater(invocation), () -> decideAsync(limiter, key, permits,
                        plan.maxWait()));
            default:
                Decision d = plan.maxWait().isZero() ? limiter.tryAcquire(key, permits)
                        : limiter.acquire(key, permits, plan.maxWait());
                if (!d.allowed()) {
                    throw new RateLimitExceededException(limiter.rule(), d);
                }
                return invocation.proceed();
        }
    }

    private static CompletableFuture<Decision> decideAsync(RateLimiter limiter, String key, long permits,
                                                           Duration maxWait) {
        return maxWait.isZero() ? limiter.tryAcquireAsync(key, permits)
                : limiter.acquireAsync(key, permits, maxWait);
    }

    /** An invocation that may be proceeded with once, later and from another thread. */
    private static Callable callLater(MethodInvocation invocation) {
        MethodInvocation later = invocation instanceof ProxyMethodInvocation p ? p.invocableClone() : invocation;
        return later::proceed;
    }

    /** A call of the method, later. */
    @FunctionalInterface
    interface Callable {
        Object call() throws Throwable;
    }

    private static Object future(Plan plan, MethodInvocation invocation, CompletableFuture<Decision> decision) {
        Callable call = callLater(invocation);
        java.util.function.Function<Decision, CompletionStage<Object>> then = d -> {
            if (!d.allowed()) {
                return CompletableFuture.failedFuture(new RateLimitExceededException(plan.limiter().rule(), d));
            }
            try {
                @SuppressWarnings("unchecked")
                CompletionStage<Object> stage = (CompletionStage<Object>) call.call();
                return stage == null ? CompletableFuture.completedFuture(null) : stage;
            } catch (Throwable t) {
                return CompletableFuture.failedFuture(t);
            }
        };
        // Decided already (memory store): call the method on this thread, as without the annotation.
        return decision.isDone() ? decision.thenCompose(then) : decision.thenComposeAsync(then);
    }

    private static String key(Plan plan, MethodBasedEvaluationContext context) {
        if (plan.key() == null) {
            return plan.constantKey();
        }
        Object value;
        try {
            value = plan.key().getValue(context);
        } catch (EvaluationException e) {
            throw new IllegalArgumentException(plan.where() + ": key could not be evaluated: " + e.getMessage(), e);
        }
        if (value == null) {
            throw new IllegalArgumentException(plan.where() + ": key '" + plan.key().getExpressionString()
                    + "' evaluated to null");
        }
        return value.toString();
    }

    private static long permits(Plan plan, MethodBasedEvaluationContext context) {
        if (plan.permits() == null) {
            return 1;
        }
        Object value;
        try {
            value = plan.permits().getValue(context);
        } catch (EvaluationException e) {
            throw new IllegalArgumentException(plan.where() + ": permits could not be evaluated: " + e.getMessage(), e);
        }
        if (!(value instanceof Number n) || n.doubleValue() != n.longValue()) {
            throw new IllegalArgumentException(plan.where() + ": permits must be a whole number, was " + value);
        }
        return n.longValue();
    }
}
