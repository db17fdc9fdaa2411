package io.sluice.server;

import com.linecorp.armeria.common.AggregatedHttpResponse;
import com.linecorp.armeria.common.ContentTooLargeException;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.HttpStatus;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.common.RequestHeaders;
import com.linecorp.armeria.server.ServerErrorHandler;
import com.linecorp.armeria.server.ServiceConfig;
import com.linecorp.armeria.server.ServiceRequestContext;

/**
 * Every error the server itself produces is JSON; a body over the limit is a 413 naming the limit, whether its
 * declared length is refused up front or a body without one overflows while it is read. gRPC requests get the
 * gRPC form of the same refusal.
 */
final class JsonErrors implements ServerErrorHandler {
    private final int maxBodyBytes;

    JsonErrors(int maxBodyBytes) {
        this.maxBodyBytes = maxBodyBytes;
    }

    @Override
    public HttpResponse onServiceException(ServiceRequestContext ctx, Throwable cause) {
        if (cause instanceof ContentTooLargeException && isGrpc(ctx.request().headers())) {
            return GrpcFraming.refuse(GrpcFraming.tooLarge(maxBodyBytes));
        }
        if (cause instanceof ContentTooLargeException) {
            return HttpResponses.error(HttpStatus.REQUEST_ENTITY_TOO_LARGE, HttpResponses.tooLarge(maxBodyBytes));
        }
        return null;
    }

    @Override
    public AggregatedHttpResponse renderStatus(ServiceRequestContext ctx, ServiceConfig config,
                                               RequestHeaders headers, HttpStatus status, String description,
                                               Throwable cause) {
        if (status == HttpStatus.REQUEST_ENTITY_TOO_LARGE && isGrpc(headers)) {
            // A gRPC client reads the status from grpc-status; a bare HTTP 413 would reach it as UNKNOWN.
            return GrpcFraming.aggregated(GrpcFraming.tooLarge(maxBodyBytes));
        }
        if (status == HttpStatus.REQUEST_ENTITY_TOO_LARGE) {
            return AggregatedHttpResponse.of(HttpStatus.REQUEST_ENTITY_TOO_LARGE, MediaType.JSON_UTF_8,
                    Json.error(HttpResponses.tooLarge(maxBodyBytes)));
        }
        String message = status.toString() + (description == null ? "" : ": " + description);
        return AggregatedHttpResponse.of(status, MediaType.JSON_UTF_8, Json.error(message));
    }

    private static boolean isGrpc(RequestHeaders headers) {
        MediaType type = headers.contentType();
        return type != null && type.subtype().startsWith("grpc");
    }
}
