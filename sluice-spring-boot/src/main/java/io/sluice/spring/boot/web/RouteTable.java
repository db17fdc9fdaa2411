package io.sluice.spring.boot.web;

import io.sluice.RateLimiter;
import io.sluice.spring.boot.RateLimiterRegistry;
import io.sluice.spring.boot.SluiceConfigurationException;
import io.sluice.spring.boot.SluiceProperties;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.common.TemplateParserContext;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.expression.spel.support.SimpleEvaluationContext;
import org.springframework.http.server.PathContainer;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;

/**
 * The routes of {@code sluice.web.routes}, checked and compiled at start-up: which requests (path patterns,
 * methods) go to which limiter, under which key, at which cost. The first route that matches a request decides
 * it. Immutable; thread-safe.
 */
public final class RouteTable {

    private static final Set<String> METHODS = Set.of("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS",
            "TRACE");
    private static final SpelExpressionParser SPEL = new SpelExpressionParser();
    private static final TemplateParserContext TEMPLATE = new TemplateParserContext();

    private final List<Route> routes;

    private RouteTable(List<Route> routes) {
        this.routes = routes;
    }

    /**
     * Compiles the routes of {@code web}.
     *
     * @throws SluiceConfigurationException naming the route property at fault: no path, a malformed pattern, an
     *                                      unknown method or rule, a key or cost that does not parse
     */
    public static RouteTable compile(SluiceProperties.Web web, RateLimiterRegistry registry) {
        if (web.getTrustedProxies() < 0) {
            throw new SluiceConfigurationException("sluice.web.trusted-proxies", "expected 0 or more, was "
                    + web.getTrustedProxies());
        }
        List<Route> routes = new ArrayList<>();
        List<SluiceProperties.Route> configured = web.getRoutes();
        for (int i = 0; i < configured.size(); i++) {
            routes.add(compile("sluice.web.routes[" + i + "]", configured.get(i), registry));
        }
        return new RouteTable(List.copyOf(routes));
    }

    private static Route compile(String at, SluiceProperties.Route r, RateLimiterRegistry registry) {
        if (r.getRule() == null || r.getRule().isBlank()) {
            throw new SluiceConfigurationException(at + ".rule", "expected the name of a rule; rules are "
                    + registry.limiters().keySet());
        }
        RateLimiter limiter = registry.find(r.getRule()).orElseThrow(() -> new SluiceConfigurationException(
                at + ".rule", "no rule '" + r.getRule() + "'; rules are " + registry.limiters().keySet()));
        if (r.getPaths().isEmpty()) {
            throw new SluiceConfigurationException(at + ".paths", "expected at least one path pattern, e.g. /api/**");
        }
        List<PathPattern> patterns = new ArrayList<>();
        for (int j = 0; j < r.getPaths().size(); j++) {
            String p = r.getPaths().get(j);
            try {
                patterns.add(PathPatternParser.defaultInstance.parse(p));
            } catch (RuntimeException e) {
                throw new SluiceConfigurationException(at + ".paths[" + j + "]", "not a valid path pattern '" + p
                        + "': " + e.getMessage());
            }
        }
        Set<String> methods = new LinkedHashSet<>();
        for (int j = 0; j < r.getMethods().size(); j++) {
            String m = r.getMethods().get(j).trim().toUpperCase(Locale.ROOT);
            if (!METHODS.contains(m)) {
                throw new SluiceConfigurationException(at + ".methods[" + j + "]", "expected one of " + new java.util.TreeSet<>(METHODS)
                        + ", was '" + r.getMethods().get(j) + "'");
            }
            methods.add(m);
        }
        Function<HttpRequestView, String> key = key(at + ".key", r.getKey(), patterns);
        Function<HttpRequestView, Long> cost = cost(at + ".cost", r.getCost());
        return new Route(at, patterns, Set.copyOf(methods), limiter, key, cost);
    }

    private static Function<HttpRequestView, String> key(String at, String spec, List<PathPattern> patterns) {
        String s = spec == null ? "client-address" : spec.trim();
        if (s.equals("client-address")) {
            return HttpRequestView::getClientAddress;
        }
        if (s.equals("principal")) {
            return HttpRequestView::getPrincipal;
        }
        if (s.startsWith("header:") && s.length() > "header:".length()) {
            String name = s.substring("header:".length()).trim();
            return v -> v.header(name);
        }
        if (s.startsWith("path-variable:") && s.length() > "path-variable:".length()) {
            String name = s.substring("path-variable:".length()).trim();
            for (PathPattern p : patterns) {
                if (!p.getPatternString().contains("{" + name + "}") && !p.getPatternString().contains("{" + name + ":")
                        && !p.getPatternString().contains("{*" + name + "}")) {
                    throw new SluiceConfigurationException(at, "path pattern '" + p.getPatternString()
                            + "' has no variable {" + name + "}");
                }
            }
            return v -> v.pathVariable(name);
        }
        if (s.startsWith("#{")) {
            Expression e = parse(at, s);
            return v -> {
                Object value = evaluate(at, e, v);
                return value == null ? null : value.toString();
            };
        }
        throw new SluiceConfigurationException(at, "expected client-address, principal, header:NAME, "
                + "path-variable:NAME or a #{...} expression, was '" + spec + "'");
    }

    private static Function<HttpRequestView, Long> cost(String at, String spec) {
        String s = spec == null ? "1" : spec.trim();
        if (s.startsWith("#{")) {
            Expression e = parse(at, s);
            return v -> {
                Object value = evaluate(at, e, v);
                if (!(value instanceof Number n) || n.longValue() < 1 || n.doubleValue() != n.longValue()) {
                    throw new InvalidRequestException("the request's cost must be a whole number of at least 1, "
                            + "was " + value);
                }
                return n.longValue();
            };
        }
        long constant;
        try {
            constant = Long.parseLong(s);
        } catch (NumberFormatException e) {
            throw new SluiceConfigurationException(at, "expected a whole number or a #{...} expression, was '"
                    + spec + "'");
        }
        if (constant < 1) {
            throw new SluiceConfigurationException(at, "expected at least 1, was " + constant);
        }
        Long boxed = constant;
        return v -> boxed;
    }

    private static Expression parse(String at, String template) {
        try {
            return SPEL.parseExpression(template, TEMPLATE);
        } catch (ParseException e) {
            throw new SluiceConfigurationException(at, "not a valid expression '" + template + "': "
                    + e.getMessage());
        }
    }

    /**
     * Evaluates over the request alone: read-only access to its properties and methods, no types, no beans, no
     * assignment, so an expression can only read the request.
     */
    private static Object evaluate(String at, Expression e, HttpRequestView view) {
        EvaluationContext context = SimpleEvaluationContext.forReadOnlyDataBinding().withInstanceMethods()
                .withRootObject(view).build();
        try {
            return e.getValue(context);
        } catch (InvalidRequestException x) {
            throw x;
        } catch (EvaluationException x) {
            if (x.getCause() instanceof InvalidRequestException ire) {
                throw ire;
            }
            throw new InvalidRequestException(at + " could not be evaluated for this request: " + x.getMessage());
        }
    }

    /** The first route matching the request, with its path variables; null when none does. */
    public Match match(String method, PathContainer path) {
        for (Route route : routes) {
            if (!route.methods.isEmpty() && !route.methods.contains(method)) {
                continue;
            }
            for (PathPattern p : route.patterns) {
                PathPattern.PathMatchInfo info = p.matchAndExtract(path);
                if (info != null) {
                    return new Match(route, info.getUriVariables());
                }
            }
        }
        return null;
    }

    /** Whether there are no routes (then no filter is needed). */
    public boolean isEmpty() {
        return routes.isEmpty();
    }

    /** A route that matched, and the variables of the pattern that matched. */
    public record Match(Route route, Map<String, String> pathVariables) {}

    /** One compiled route. */
    public static final class Route {
        private final String property;
        private final List<PathPattern> patterns;
        private final Set<String> methods;
        private final RateLimiter limiter;
        private final Function<HttpRequestView, String> key;
        private final Function<HttpRequestView, Long> cost;

        Route(String property, List<PathPattern> patterns, Set<String> methods, RateLimiter limiter,
              Function<HttpRequestView, String> key, Function<HttpRequestView, Long> cost) {
            this.property = property;
            this.patterns = patterns;
            this.methods = methods;
            this.limiter = limiter;
            this.key = key;
            this.cost = cost;
        }

        /** The limiter of the route's rule. */
        public RateLimiter limiter() {
            return limiter;
        }

        /**
         * The request's key: the source's value, or {@code anonymous:} and the client address when it has none.
         *
         * @throws InvalidRequestException when the value is not a valid key (too long)
         */
        public String key(HttpRequestView request) {
            String k = key.apply(request);
            if (k == null || k.isEmpty()) {
                k = "anonymous:" + request.getClientAddress();
            }
            try {
                return RateLimiter.checkKey(k);
            } catch (IllegalArgumentException e) {
                throw new InvalidRequestException("the request's rate-limit key (" + property + ".key): "
                        + e.getMessage());
            }
        }

        /**
         * The request's cost in permits.
         *
         * @throws InvalidRequestException when the expression yields no whole number of at least 1, or more than
         *                                 the rule allows one request
         */
        public long cost(HttpRequestView request) {
            long c = cost.apply(request);
            if (c > limiter.rule().maxPermits()) {
                throw new InvalidRequestException("the request's cost " + c + " exceeds the most rule '"
                        + limiter.rule().name() + "' grants at once, " + limiter.rule().maxPermits());
            }
            return c;
        }
    }
}
