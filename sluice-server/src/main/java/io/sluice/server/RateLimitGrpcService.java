package io.sluice.server;

import com.linecorp.armeria.server.ServiceRequestContext;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.List;

/**
 * Envoy's {@code envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit}, from Envoy's published stubs:
 * what Envoy's global rate-limit filter (and Istio) call. Invalid input is {@code INVALID_ARGUMENT} naming
 * the field, a request over the size limit {@code RESOURCE_EXHAUSTED}, before anything is counted; a store failure is {@code UNAVAILABLE} (Envoy's
 * {@code failure_mode_deny} decides what that means for traffic).
 */
final class RateLimitGrpcService extends RateLimitServiceGrpc.RateLimitServiceImplBase {

    private final EnvoyEndpoint endpoint;

    /** @param endpoint named {@code "grpc"} */
    RateLimitGrpcService(EnvoyEndpoint endpoint) {
        this.endpoint = endpoint;
    }

    @Override
    public void shouldRateLimit(RateLimitRequest request, StreamObserver<RateLimitResponse> observer) {
        long start = System.nanoTime();
        List<EnvoyDecider.Descriptor> descriptors;
        int maxBodyBytes = endpoint.settings().maxBodyBytes();
        try {
            if (request.getSerializedSize() > maxBodyBytes) {
                // Only a compressed message gets here (GrpcFraming bounds the rest): as large once inflated.
                endpoint.refused();
                observer.onError(GrpcFraming.tooLarge(maxBodyBytes).asRuntimeException());
                return;
            }
            descriptors = endpoint.descriptors(request);
        } catch (InvalidRequestException e) {
            endpoint.refused();
            observer.onError(Status.INVALID_ARGUMENT.withDescription(e.getMessage()).asRuntimeException());
            return;
        }
        endpoint.decide(request, descriptors, start, ServiceRequestContext.current().eventLoop(), (response, cause) -> {
            if (cause != null) {
                observer.onError(Status.UNAVAILABLE.withDescription("store unavailable: " + cause.getMessage())
                        .asRuntimeException());
            } else {
                observer.onNext(response);
                observer.onCompleted();
            }
            return null;
        });
    }
}
