package io.sluice.server;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import com.linecorp.armeria.common.AggregatedHttpRequest;
import com.linecorp.armeria.common.HttpRequest;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.HttpStatus;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.server.HttpService;
import com.linecorp.armeria.server.ServiceRequestContext;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;

/**
 * envoyproxy/ratelimit's {@code POST /json}: a {@code RateLimitRequest} in proto3's JSON mapping in, the
 * {@code RateLimitResponse} in the same mapping out (default values left out, as Go's marshaller does), with
 * 200 when the overall code is OK and 429 when it is OVER_LIMIT:
 *
 * <pre>
 * {"domain": "dummy", "descriptors": [{"entries": [{"key": "one_per_day", "value": "something"}]}]}
 * → {"overallCode":"OK","statuses":[{"code":"OK","currentLimit":{"requestsPerUnit":1,"unit":"DAY"},...}]}
 * </pre>
 */
final class EnvoyJsonService implements HttpService {

    private static final String API = "json";
    private static final JsonFormat.Parser PARSER = JsonFormat.parser();
    private static final JsonFormat.Printer PRINTER = JsonFormat.printer().omittingInsignificantWhitespace();

    private final Supplier<RuleSet> rules;
    private final EnvoyDecider envoy;
    private final Settings settings;
    private final ServerMetrics metrics;
    private final StoreErrors storeErrors;

    EnvoyJsonService(Supplier<RuleSet> rules, EnvoyDecider envoy, Settings settings, ServerMetrics metrics,
                     StoreErrors storeErrors) {
        this.rules = rules;
        this.envoy = envoy;
        this.settings = settings;
        this.metrics = metrics;
        this.storeErrors = storeErrors;
    }

    @Override
    public HttpResponse serve(ServiceRequestContext ctx, HttpRequest req) {
        long start = System.nanoTime();
        return HttpResponse.of(req.aggregate().thenCompose(body -> respond(body, start)).exceptionally(e -> {
            metrics.invalidRequest(API);
            return HttpResponses.unreadable(e, settings.maxBodyBytes());
        }));
    }

    private CompletableFuture<HttpResponse> respond(AggregatedHttpRequest body, long start) {
        RateLimitRequest request;
        List<EnvoyDecider.Descriptor> descriptors;
        try {
            RateLimitRequest.Builder builder = RateLimitRequest.newBuilder();
            // contentUtf8() would turn malformed bytes into U+FFFD: refuse them instead.
            Utf8.require(body.content().array());
            try {
                PARSER.merge(body.contentUtf8(), builder);
            } catch (InvalidProtocolBufferException | RuntimeException e) {
                // The parser also throws unchecked exceptions for some malformed input (e.g. deep nesting).
                throw InvalidRequestException.at("", "not a RateLimitRequest in proto3 JSON: "
                        + String.valueOf(e.getMessage()).strip().replaceAll("\\s*\\R\\s*", "; "));
            }
            request = builder.build();
            descriptors = EnvoyProtocol.descriptors(request);
            envoy.validate(request.getDomain(), descriptors, settings.maxBatch(), settings.maxEntries(), "descriptors");
        } catch (InvalidRequestException e) {
            metrics.invalidRequest(API);
            return CompletableFuture.completedFuture(HttpResponses.error(HttpStatus.BAD_REQUEST, e.getMessage()));
        }
        return envoy.decide(rules.get(), request.getDomain(), descriptors, false, API).handle((statuses, e) -> {
            metrics.latency(API, start);
            if (e != null) {
                Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
                storeErrors.record(API, cause);
                return HttpResponses.error(HttpStatus.SERVICE_UNAVAILABLE, "store unavailable: " + cause.getMessage());
            }
            RateLimitResponse response = EnvoyProtocol.response(statuses, settings.envoyHeaders());
            String json;
            try {
                json = PRINTER.print(response);
            } catch (InvalidProtocolBufferException ex) {
                throw new IllegalStateException("a response always prints", ex);
            }
            HttpStatus status = response.getOverallCode() == RateLimitResponse.Code.OVER_LIMIT
                    ? HttpStatus.TOO_MANY_REQUESTS : HttpStatus.OK;
            return HttpResponse.of(status, MediaType.JSON_UTF_8, json);
        });
    }
}
