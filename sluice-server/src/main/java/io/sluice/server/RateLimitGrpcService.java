package io.sluice.server;

import com.linecorp.armeria.server.ServiceRequestContext;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;

/**
 * Envoy's {@code envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit}, from Envoy's published stubs:
 * what Envoy's global rate-limit filter (and Istio) call. Invalid input is {@code INVALID_ARGUMENT} naming
 * the field, a request over the size limit {@code RESOURCE_EXHAUSTED}, before anything is counted; a store failure is {@code UNAVAILABLE} (Envoy's
 * {@code failure_mode_deny} decides what that means for traffic).
 */
final class RateLimitGrpcService extends RateLimitServiceGrpc.RateLimitServiceImplBase {

    private static final String API = "grpc";

    private final Supplier<RuleSet> rules;
    private final EnvoyDecider envoy;
    private final Settings settings;
    private final ServerMetrics metrics;
    private final StoreErrors storeErrors;

    RateLimitGrpcService(Supplier<RuleSet> rules, EnvoyDecider envoy, Settings settings, ServerMetrics metrics,
                         StoreErrors storeErrors) {
        this.rules = rules;
        this.envoy = envoy;
        this.settings = settings;
        this.metrics = metrics;
        this.storeErrors = storeErrors;
    }

    @Override
    public void shouldRateLimit(RateLimitRequest request, StreamObserver<RateLimitResponse> observer) {
        long start = System.nanoTime();
        List<EnvoyDecider.Descriptor> descriptors;
        try {
            int size = request.getSerializedSize();
            if (size > settings.maxBodyBytes()) {
                // Only a compressed message gets here (GrpcFraming bounds the rest): as large once inflated.
                metrics.invalidRequest(API);
                observer.onError(GrpcFraming.tooLarge(settings.maxBodyBytes()).asRuntimeException());
                return;
            }
            descriptors = EnvoyProtocol.descriptors(request);
            envoy.validate(request.getDomain(), descriptors, settings.maxBatch(), settings.maxEntries(), "descriptors");
        } catch (InvalidRequestException e) {
            metrics.invalidRequest(API);
            observer.onError(Status.INVALID_ARGUMENT.withDescription(e.getMessage()).asRuntimeException());
            return;
        }
        ServiceRequestContext ctx = ServiceRequestContext.current();
        envoy.decide(rules.get(), request.getDomain(), descriptors, false, API).whenCompleteAsync((statuses, e) -> {
            metrics.latency(API, start);
            if (e != null) {
                Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
                storeErrors.record(API, cause);
                observer.onError(Status.UNAVAILABLE.withDescription("store unavailable: " + cause.getMessage())
                        .asRuntimeException());
                return;
            }
            observer.onNext(EnvoyProtocol.response(statuses, settings.envoyHeaders()));
            observer.onCompleted();
        }, ctx.eventLoop());
    }
}
