package io.sluice.spring.boot.web;

import io.sluice.spring.boot.RateLimitExceededException;
import jakarta.servlet.http.HttpServletRequest;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * Answers {@link RateLimitExceededException} from Spring MVC handlers as the filter answers a rejection: 429,
 * the header fields and problem+json. Ordered last, so an application's own handler for it wins.
 */
@RestControllerAdvice
@Order(Ordered.LOWEST_PRECEDENCE)
public class MvcRateLimitExceptionHandler {

    @ExceptionHandler(RateLimitExceededException.class)
    public ResponseEntity<String> rateLimited(RateLimitExceededException e, HttpServletRequest request) {
        String path = request.getRequestURI().substring(request.getContextPath().length());
        return RateLimitResponse.entity(e, path);
    }
}
