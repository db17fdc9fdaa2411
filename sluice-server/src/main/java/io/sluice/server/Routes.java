package io.sluice.server;

import com.linecorp.armeria.common.HttpMethod;
import com.linecorp.armeria.server.HttpService;
import com.linecorp.armeria.server.Route;
import com.linecorp.armeria.server.Server;
import com.linecorp.armeria.server.ServerBuilder;
import com.linecorp.armeria.server.grpc.GrpcHealthCheckService;
import com.linecorp.armeria.server.grpc.GrpcService;
import com.linecorp.armeria.server.grpc.GrpcServiceBuilder;
import com.linecorp.armeria.server.healthcheck.SettableHealthChecker;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.grpc.ServerInterceptors;
import io.sluice.Store;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Which service answers which path, and on which port: the JSON APIs and operations endpoints on the HTTP port,
 * Envoy's {@code RateLimitService} and gRPC health on the gRPC port (or on the HTTP port when the numbers are
 * equal). The one place that lists the server's endpoints.
 */
final class Routes {

    /**
     * The servers of one {@link SluiceServer}, built but not started.
     *
     * @param http the HTTP port's server
     * @param grpc the gRPC port's server, or null when gRPC is served on the HTTP port
     * @param connections the client connections both hold
     */
    record Servers(Server http, Server grpc, OpenConnections connections) {}

    private Routes() {}

    static Servers build(Settings settings, Store store, ServerMetrics metrics, AtomicReference<RuleSet> rules,
                         RuleReloader reloader, boolean clientClock, HotKeys hotKeys) {
        StoreErrors storeErrors = new StoreErrors(metrics);
        EnvoyDecider envoy = new EnvoyDecider(store, metrics, hotKeys);
        BearerAuth auth = settings.token() == null ? null : new BearerAuth(settings.token(), metrics);

        GrpcServiceBuilder grpcService = GrpcService.builder()
                .maxRequestMessageLength(HttpStack.grpcTransportLimit(settings))
                .exceptionHandler(new MalformedGrpcRequests(settings.maxBodyBytes()));
        RateLimitGrpcService rls = new RateLimitGrpcService(
                new EnvoyEndpoint("grpc", rules::get, envoy, settings, metrics, storeErrors));
        grpcService.addService(auth == null ? rls.bindService() : ServerInterceptors.intercept(rls, auth.grpc()));
        // grpc.health.v1 answers for "" (the whole server) and for the rate-limit service by its own name, the
        // name Envoy's and Kubernetes' gRPC probes are usually given; both follow the server's lifecycle
        // (NOT_SERVING once stopping). Left unauthenticated, like GET /health.
        grpcService.addService(GrpcHealthCheckService.builder()
                .serviceCheckers(RateLimitServiceGrpc.SERVICE_NAME, new SettableHealthChecker(true))
                .build());
        GrpcService grpcHandler = grpcService.build();

        OpenConnections connections = new OpenConnections();
        ServerBuilder sb = HttpStack.base(settings, settings.httpPort(), settings.maxBodyBytes(), connections)
                .meterRegistry(metrics.registry());
        CheckRequest parser = new CheckRequest(settings, envoy);
        route(sb, HttpMethod.POST, "/v1/check", guarded(auth, "http",
                new CheckService(rules::get, parser, envoy, metrics, storeErrors, false, settings.maxBodyBytes())));
        route(sb, HttpMethod.POST, "/v1/check/batch", guarded(auth, "http",
                new CheckService(rules::get, parser, envoy, metrics, storeErrors, true, settings.maxBodyBytes(),
                        store)));
        SettleService settle = new SettleService(rules::get, parser, metrics, storeErrors, settings.maxBodyBytes());
        route(sb, HttpMethod.POST, "/v1/charge", guarded(auth, "http", settle.charge()));
        route(sb, HttpMethod.POST, "/v1/settle", guarded(auth, "http", settle.settle()));
        route(sb, HttpMethod.POST, "/json", guarded(auth, "json",
                new EnvoyJsonService(new EnvoyEndpoint("json", rules::get, envoy, settings, metrics, storeErrors))));
        StoreService remote = new StoreService(store, new RemoteRules(rules::get), metrics, storeErrors, clientClock,
                settings.maxBodyBytes(), hotKeys);
        route(sb, HttpMethod.POST, "/v1/store/rules", guarded(auth, StoreService.API, remote.register()));
        route(sb, HttpMethod.POST, "/v1/store/call", guarded(auth, StoreService.API, remote.call()));
        route(sb, HttpMethod.POST, "/v1/store/calls", guarded(auth, StoreService.API,
                new StoreBatchService(remote, metrics, settings.maxBatch(), settings.maxBodyBytes()).service()));
        AdminService admin = new AdminService(rules::get, parser, settings, envoy, store, hotKeys, metrics, storeErrors,
                settings.maxBodyBytes());
        route(sb, HttpMethod.POST, "/v1/admin/state", guarded(auth, AdminService.API, admin.state()));
        route(sb, HttpMethod.POST, "/v1/admin/reset", guarded(auth, AdminService.API, admin.reset()));
        route(sb, HttpMethod.GET, "/v1/admin/top", guarded(auth, AdminService.API, admin.top()));
        route(sb, HttpMethod.GET, "/v1/rules", guarded(auth, "http",
                OpsService.rules(rules::get, () -> reloader == null ? null : reloader.lastError())));
        route(sb, HttpMethod.GET, "/metrics", guarded(auth, "http", OpsService.metrics(metrics)));
        route(sb, HttpMethod.GET, "/health", OpsService.health());
        route(sb, HttpMethod.GET, "/healthcheck", OpsService.healthcheck());
        route(sb, HttpMethod.GET, "/ready", OpsService.ready(store));
        GrpcFraming framing = new GrpcFraming(settings.maxBodyBytes());
        Server grpc;
        if (settings.grpcOnHttpPort()) {
            sb.service(grpcHandler, s -> s.decorate(framing));
            grpc = null;
        } else {
            ServerBuilder gb = HttpStack.base(settings, settings.grpcPort(), HttpStack.grpcTransportLimit(settings),
                    connections);
            gb.service(grpcHandler, s -> s.decorate(framing));
            grpc = gb.build();
        }
        return new Servers(sb.build(), grpc, connections);
    }

    /** Serves {@code path} for {@code method}; a GET route answers HEAD too. */
    static void route(ServerBuilder sb, HttpMethod method, String path, HttpService service) {
        List<HttpMethod> methods = method == HttpMethod.GET ? List.of(HttpMethod.GET, HttpMethod.HEAD)
                : List.of(method);
        sb.service(Route.builder().path(path).methods(methods).build(), service);
    }

    private static HttpService guarded(BearerAuth auth, String api, HttpService service) {
        return auth == null ? service : service.decorate(auth.http(api));
    }
}
