package io.sluice.server;

import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.function.BiFunction;
import java.util.function.Supplier;

/**
 * What Envoy's rate-limit API does alike over its two wire formats (gRPC {@code ShouldRateLimit},
 * {@link RateLimitGrpcService}, and {@code POST /json}, {@link EnvoyJsonService}) once a {@code RateLimitRequest}
 * is read: validating its descriptors, counting what is refused, deciding them against the current rules, timing
 * the decision and recording a store failure, each under the endpoint's own metrics name. How a request is read
 * and how an answer or a failure is written stay with each endpoint.
 *
 * @param api the endpoint's name in metrics and logs
 */
record EnvoyEndpoint(String api, Supplier<RuleSet> rules, EnvoyDecider envoy, Settings settings,
                     ServerMetrics metrics, StoreErrors storeErrors) {

    /** The request's descriptors, within the server's limits on their number and entries. */
    List<EnvoyDecider.Descriptor> descriptors(RateLimitRequest request) throws InvalidRequestException {
        List<EnvoyDecider.Descriptor> descriptors = EnvoyProtocol.descriptors(request);
        envoy.validate(request.getDomain(), descriptors, settings.maxBatch(), settings.maxEntries(), "descriptors");
        return descriptors;
    }

    /** Counts a request refused before anything was decided. */
    void refused() {
        metrics.invalidRequest(api);
    }

    /**
     * Decides {@code descriptors} and answers on {@code executor} with {@code answer(response, null)}, or, when the
     * store failed, {@code answer(null, cause)} once the failure is recorded. {@code start} is the request's
     * {@link System#nanoTime()} on arrival, for the latency metric.
     */
    <T> CompletableFuture<T> decide(RateLimitRequest request, List<EnvoyDecider.Descriptor> descriptors, long start,
                                    Executor executor, BiFunction<RateLimitResponse, Throwable, T> answer) {
        return envoy.decide(rules.get(), request.getDomain(), descriptors, false, api).handleAsync((statuses, e) -> {
            metrics.latency(api, start);
            if (e != null) {
                Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
                storeErrors.record(api, cause);
                return answer.apply(null, cause);
            }
            return answer.apply(EnvoyProtocol.response(statuses, settings.envoyHeaders()), null);
        }, executor);
    }
}
