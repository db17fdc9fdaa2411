package io.sluice.spring.boot.web;

import io.sluice.RateLimiter;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

/**
 * The WebFlux filter of {@code sluice.web.routes}: as {@link SluiceServletFilter}, without blocking: each
 * decision is the limiter's asynchronous call (one Redis round trip on Lettuce's event loop, or at once in
 * memory).
 */
public class SluiceWebFilter implements WebFilter, Ordered {

    private final RouteTable routes;
    private final boolean admittedHeaders;
    private final int trustedProxies;
    private final int order;

    public SluiceWebFilter(RouteTable routes, boolean admittedHeaders, int trustedProxies, int order) {
        this.routes = routes;
        this.admittedHeaders = admittedHeaders;
        this.trustedProxies = trustedProxies;
        this.order = order;
    }

    @Override
    public int getOrder() {
        return order;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        ServerHttpRequest request = exchange.getRequest();
        RouteTable.Match match = routes.match(request.getMethod().name(), request.getPath().pathWithinApplication());
        if (match == null) {
            return chain.filter(exchange);
        }
        String path = request.getPath().pathWithinApplication().value();
        RouteTable.Route route = match.route();
        RateLimiter limiter = route.limiter();
        return exchange.getPrincipal().map(Principal::getName).map(Optional::of).defaultIfEmpty(Optional.empty())
                .flatMap(principal -> {
                    String key;
                    long cost;
                    try {
                        View view = new View(request, path, match.pathVariables(), trustedProxies, principal.orElse(null));
                        key = route.key(view);
                        cost = route.cost(view);
                    } catch (InvalidRequestException e) {
                        return write(exchange.getResponse(), HttpStatus.BAD_REQUEST.value(), Map.of(),
                                RateLimitResponse.badRequest(e.getMessage(), path));
                    }
                    return Mono.fromFuture(() -> limiter.tryAcquireAsync(key, cost)).flatMap(decision -> {
                        Map<String, String> headers = RateLimitResponse.headers(limiter.rule(), decision);
                        if (decision.allowed()) {
                            if (admittedHeaders) {
                                headers.forEach(exchange.getResponse().getHeaders()::set);
                            }
                            return chain.filter(exchange);
                        }
                        return write(exchange.getResponse(), RateLimitResponse.STATUS, headers,
                                RateLimitResponse.problem(limiter.rule(), decision, path));
                    }).onErrorResume(e -> StoreUnavailable.is(e) && !exchange.getResponse().isCommitted(),
                            e -> write(exchange.getResponse(), 503, Map.of(), StoreUnavailable.problem(path)));
                });
    }

    private static Mono<Void> write(ServerHttpResponse response, int status, Map<String, String> headers, String body) {
        response.setRawStatusCode(status);
        headers.forEach(response.getHeaders()::set);
        response.getHeaders().setContentType(MediaType.parseMediaType(RateLimitResponse.PROBLEM_JSON));
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        response.getHeaders().setContentLength(bytes.length);
        DataBuffer buffer = response.bufferFactory().wrap(bytes);
        return response.writeWith(Mono.just(buffer));
    }

    /** A reactive request as {@link HttpRequestView}. */
    private static final class View extends HttpRequestView {
        private final ServerHttpRequest request;
        private final String path;
        private final String principal;

        View(ServerHttpRequest request, String path, Map<String, String> pathVariables, int trustedProxies,
             String principal) {
            super(pathVariables, trustedProxies);
            this.request = request;
            this.path = path;
            this.principal = principal;
        }

        @Override
        public String getMethod() {
            return request.getMethod().name();
        }

        @Override
        public String getPath() {
            return path;
        }

        @Override
        public String header(String name) {
            return request.getHeaders().getFirst(name);
        }

        @Override
        protected List<String> headers(String name) {
            List<String> values = request.getHeaders().get(name);
            return values == null ? List.of() : values;
        }

        @Override
        public String param(String name) {
            return request.getQueryParams().getFirst(name);
        }

        @Override
        public String getPrincipal() {
            return principal;
        }

        @Override
        protected String peerAddress() {
            return request.getRemoteAddress() == null || request.getRemoteAddress().getAddress() == null ? "unknown"
                    : request.getRemoteAddress().getAddress().getHostAddress();
        }
    }
}
