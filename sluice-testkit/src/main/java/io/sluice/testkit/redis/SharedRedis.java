package io.sluice.testkit.redis;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * JUnit 5 extension for the per-JVM test servers: injects {@link RedisServer#shared()} and
 * {@link RedisCluster#shared()} into test constructors and methods that declare them, and stops both when the
 * whole test run ends (a resource in the root context's store), so a suite of many classes starts each server
 * once. A JVM shutdown hook stops them too, for runs that end any other way.
 *
 * <pre>{@code
 * @ExtendWith(SharedRedis.class)
 * class MyIT {
 *     @Test void works(RedisServer redis) { ... redis.uri() ... }
 * }
 * }</pre>
 */
public final class SharedRedis implements BeforeAllCallback, ParameterResolver {

    private static boolean hookInstalled;

    @Override
    public void beforeAll(ExtensionContext context) {
        context.getRoot().getStore(ExtensionContext.Namespace.GLOBAL)
                .getOrComputeIfAbsent(SharedRedis.class, k -> (ExtensionContext.Store.CloseableResource) SharedRedis::stopAll);
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        Class<?> type = parameter.getParameter().getType();
        return type == RedisServer.class || type == RedisCluster.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == RedisServer.class ? RedisServer.shared() : RedisCluster.shared();
    }

    /** Stops the shared standalone server and cluster, if started. */
    public static void stopAll() {
        RedisServer.stopShared();
        RedisCluster.stopShared();
    }

    /** Installs the JVM shutdown hook that stops the shared servers, once. */
    static synchronized void stopAtExit() {
        if (!hookInstalled) {
            Runtime.getRuntime().addShutdownHook(new Thread(SharedRedis::stopAll, "sluice-redis-test-servers"));
            hookInstalled = true;
        }
    }
}
