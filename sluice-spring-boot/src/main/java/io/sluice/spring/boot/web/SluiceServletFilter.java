package io.sluice.spring.boot.web;

import io.sluice.Decision;
import io.sluice.RateLimiter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.springframework.http.server.PathContainer;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * The servlet filter of {@code sluice.web.routes}: decides each matching request on its route's limiter before
 * the application sees it. A rejected request gets 429 with {@code Retry-After}, the {@code RateLimit} fields
 * and a problem+json body and goes no further; an admitted one carries the fields too unless
 * {@code sluice.web.admitted-headers=false}. A request whose key or cost cannot be used gets 400. Decisions are
 * synchronous on the request thread (a Redis store's round trip included); store failures follow each rule's
 * failure policy; with {@code raise}, a store out of reach is answered 503 (problem+json, naming neither the store
 * nor its address) and any other failure propagates as the servlet container's 500.
 */
public class SluiceServletFilter extends OncePerRequestFilter {

    private final RouteTable routes;
    private final boolean admittedHeaders;
    private final int trustedProxies;

    public SluiceServletFilter(RouteTable routes, boolean admittedHeaders, int trustedProxies) {
        this.routes = routes;
        this.admittedHeaders = admittedHeaders;
        this.trustedProxies = trustedProxies;
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        String path = request.getRequestURI().substring(request.getContextPath().length());
        RouteTable.Match match = routes.match(request.getMethod(), PathContainer.parsePath(path));
        if (match == null) {
            chain.doFilter(request, response);
            return;
        }
        RouteTable.Route route = match.route();
        RateLimiter limiter = route.limiter();
        Decision decision;
        try {
            View view = new View(request, path, match.pathVariables(), trustedProxies);
            decision = limiter.tryAcquire(route.key(view), route.cost(view));
        } catch (InvalidRequestException e) {
            write(response, 400, Map.of(), RateLimitResponse.badRequest(e.getMessage(), path));
            return;
        } catch (RuntimeException e) {
            if (!StoreUnavailable.is(e)) {
                throw e;
            }
            write(response, 503, Map.of(), StoreUnavailable.problem(path));
            return;
        }
        if (decision.allowed()) {
            if (admittedHeaders) {
                RateLimitResponse.headers(limiter.rule(), decision).forEach(response::setHeader);
            }
            chain.doFilter(request, response);
        } else {
            write(response, RateLimitResponse.STATUS, RateLimitResponse.headers(limiter.rule(), decision),
                    RateLimitResponse.problem(limiter.rule(), decision, path));
        }
    }

    private static void write(HttpServletResponse response, int status, Map<String, String> headers, String body)
            throws IOException {
        response.setStatus(status);
        headers.forEach(response::setHeader);
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        response.setContentType(RateLimitResponse.PROBLEM_JSON);
        response.setContentLength(bytes.length);
        response.getOutputStream().write(bytes);
    }

    /** A servlet request as {@link HttpRequestView}. */
    private static final class View extends HttpRequestView {
        private final HttpServletRequest request;
        private final String path;

        View(HttpServletRequest request, String path, Map<String, String> pathVariables, int trustedProxies) {
            super(pathVariables, trustedProxies);
            this.request = request;
            this.path = path;
        }

        @Override
        public String getMethod() {
            return request.getMethod();
        }

        @Override
        public String getPath() {
            return path;
        }

        @Override
        public String header(String name) {
            return request.getHeader(name);
        }

        @Override
        protected List<String> headers(String name) {
            return Collections.list(request.getHeaders(name));
        }

        @Override
        public String param(String name) {
            return request.getParameter(name);
        }

        @Override
        public String getPrincipal() {
            Principal p = request.getUserPrincipal();
            return p == null ? null : p.getName();
        }

        @Override
        protected String peerAddress() {
            return request.getRemoteAddr();
        }
    }
}
