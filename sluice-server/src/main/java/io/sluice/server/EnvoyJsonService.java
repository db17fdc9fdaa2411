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

    private static final JsonFormat.Parser PARSER = JsonFormat.parser();
    private static final JsonFormat.Printer PRINTER = JsonFormat.printer().omittingInsignificantWhitespace();

    private final EnvoyEndpoint endpoint;

    /** @param endpoint named {@code "json"} */
    EnvoyJsonService(EnvoyEndpoint endpoint) {
        this.endpoint = endpoint;
    }

    @Override
    public HttpResponse serve(ServiceRequestContext ctx, HttpRequest req) {
        long start = System.nanoTime();
        return HttpResponse.of(req.aggregate().thenCompose(body -> respond(body, start)).exceptionally(e -> {
            endpoint.refused();
            return HttpResponses.unreadable(e, endpoint.settings().maxBodyBytes());
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
            descriptors = endpoint.descriptors(request);
        } catch (InvalidRequestException e) {
            endpoint.refused();
            return CompletableFuture.completedFuture(HttpResponses.error(HttpStatus.BAD_REQUEST, e.getMessage()));
        }
        // Answered on the thread that completes the decision: HttpResponse.of takes the response from any thread.
        return endpoint.decide(request, descriptors, start, Runnable::run, (response, cause) -> {
            if (cause != null) {
                return HttpResponses.error(HttpStatus.SERVICE_UNAVAILABLE, "store unavailable: " + cause.getMessage());
            }
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
