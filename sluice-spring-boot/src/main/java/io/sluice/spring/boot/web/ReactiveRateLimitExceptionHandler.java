package io.sluice.spring.boot.web;

import io.sluice.spring.boot.RateLimitExceededException;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.ResponseEntity;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * Answers {@link RateLimitExceededException} from WebFlux handlers (thrown, or the error of a {@code Mono} or
 * {@code Flux}) as the filter answers a rejection. Ordered last, so an application's own handler for it wins.
 */
@RestControllerAdvice
@Order(Ordered.LOWEST_PRECEDENCE)
public class ReactiveRateLimitExceptionHandler {

    @ExceptionHandler(RateLimitExceededException.class)
    public ResponseEntity<String> rateLimited(RateLimitExceededException e, ServerHttpRequest request) {
        return RateLimitResponse.entity(e, request.getPath().pathWithinApplication().value());
    }
}
