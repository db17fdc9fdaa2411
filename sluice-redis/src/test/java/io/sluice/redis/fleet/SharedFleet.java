package io.sluice.redis.fleet;

import java.util.UUID;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Injects the test run's one {@link FleetAccuracyIT.Fleet}: its worker processes take seconds to start (four
 * JVMs on two cores), and the classes that drive them ({@link FleetAccuracyIT}, {@link LeasedFleetIT}) keep
 * apart by key, so they share it. It starts on first use and is kept in the root context's store, which closes
 * it (an {@link AutoCloseable}) when the whole run ends.
 */
final class SharedFleet implements ParameterResolver {

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == FleetAccuracyIT.Fleet.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        return context.getRoot().getStore(ExtensionContext.Namespace.create(SharedFleet.class)).getOrComputeIfAbsent(
                FleetAccuracyIT.Fleet.class,
                k -> FleetAccuracyIT.Fleet.start("fleet-" + UUID.randomUUID().toString().substring(0, 8)),
                FleetAccuracyIT.Fleet.class);
    }
}
