package io.sluice.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.linecorp.armeria.common.AggregatedHttpRequest;
import com.linecorp.armeria.common.HttpRequest;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.HttpStatus;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.server.HttpService;
import com.linecorp.armeria.server.ServiceRequestContext;
import java.util.Iterator;
import java.util.concurrent.CompletableFuture;

/**
 * {@code POST /v1/store/calls}: many remote-store calls in one request, the transport the remote store batches
 * concurrent calls on. Body <code>{"calls": [call, ...]}</code>, each call exactly the body of a
 * {@code POST /v1/store/call} (any op it takes); answer <code>{"results": [{"status": s, "body": answer},
 * ...]}</code>, one per call and in the calls' order, each the status and body that call would have been
 * answered on its own.
 *
 * <p>Each call is decided by {@link StoreService#respond} as if it came alone, independently of the others: one
 * call's bad input, unknown rule or store failure is that call's answer only, and the others are decided. The
 * envelope alone can refuse the whole request (400 {@code invalid}: not an object, no or an empty {@code calls},
 * more calls than {@code --max-batch}; 413 past {@code --max-body-bytes}); then nothing was decided, so the
 * client may send the calls again. Calls of one request start in order; those that wait on the store (Redis)
 * are in flight together, as concurrent single calls are.
 *
 * <p>Metrics: the request's latency as {@code sluice_check_seconds{api="store_batch"}}, and
 * {@code sluice_store_batch_calls} (count: requests, sum: calls they carried).
 */
final class StoreBatchService {

    /** The {@code api} label of this endpoint's latency. */
    static final String LATENCY_API = "store_batch";

    private final StoreService calls;
    private final ServerMetrics metrics;
    private final int maxCalls;
    private final int maxBodyBytes;

    StoreBatchService(StoreService calls, ServerMetrics metrics, int maxCalls, int maxBodyBytes) {
        this.calls = calls;
        this.metrics = metrics;
        this.maxCalls = maxCalls;
        this.maxBodyBytes = maxBodyBytes;
    }

    HttpService service() {
        return (ServiceRequestContext ctx, HttpRequest req) -> {
            long start = System.nanoTime();
            return HttpResponse.of(req.aggregate().thenCompose(body -> answer(ctx, body)
                    .whenComplete((r, e) -> metrics.latency(LATENCY_API, start)))
                    .exceptionally(e -> HttpResponses.unreadable(e, maxBodyBytes)));
        };
    }

    private CompletableFuture<HttpResponse> answer(ServiceRequestContext ctx, AggregatedHttpRequest body) {
        JsonNode list;
        try {
            list = calls(CheckRequest.parse(body.content().array()));
        } catch (InvalidRequestException e) {
            metrics.invalidRequest(StoreService.API);
            return CompletableFuture.completedFuture(StoreAnswer.error(HttpStatus.BAD_REQUEST, "invalid",
                    e.getMessage()).response());
        }
        int n = list.size();
        metrics.storeBatch(n);
        @SuppressWarnings("unchecked")
        CompletableFuture<StoreAnswer>[] answers = new CompletableFuture[n];
        for (int i = 0; i < n; i++) {
            try {
                answers[i] = calls.respond(ctx, list.get(i));
            } catch (RuntimeException e) {
                // respond answers every failure it expects; anything else is this call's 500, not the batch's.
                answers[i] = CompletableFuture.completedFuture(StoreAnswer.error(HttpStatus.INTERNAL_SERVER_ERROR,
                        "store_error", "store failed: " + e));
            }
        }
        return CompletableFuture.allOf(answers).handle((x, ignored) -> {
            StringBuilder s = new StringBuilder(32 + 240 * n).append("{\"results\":[");
            for (int i = 0; i < n; i++) {
                StoreAnswer a = answers[i].isCompletedExceptionally()
                        ? StoreAnswer.error(HttpStatus.INTERNAL_SERVER_ERROR, "store_error", "store failed: "
                                + answers[i].handle((v, e) -> String.valueOf(e)).join())
                        : answers[i].join();
                s.append(i == 0 ? "{\"status\":" : ",{\"status\":").append(a.status().code())
                        .append(",\"body\":").append(a.json()).append('}');
            }
            return HttpResponse.of(HttpStatus.OK, MediaType.JSON_UTF_8, s.append("]}").toString());
        });
    }

    /** The envelope's {@code calls}, checked; each element is checked as a call ({@link StoreCall}). */
    private JsonNode calls(JsonNode root) throws InvalidRequestException {
        if (!root.isObject()) {
            throw InvalidRequestException.at("", "expected a JSON object {\"calls\": [...]}");
        }
        for (Iterator<String> names = root.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (!name.equals("calls")) {
                throw InvalidRequestException.at(name, "unknown field; expected calls");
            }
        }
        JsonNode list = root.get("calls");
        if (list == null || !list.isArray() || list.isEmpty()) {
            throw InvalidRequestException.at("calls", "expected a non-empty list of store calls");
        }
        if (list.size() > maxCalls) {
            throw InvalidRequestException.at("calls", "expected at most " + maxCalls + " calls (--max-batch); was "
                    + list.size());
        }
        return list;
    }
}
