package io.sluice.spring.boot.web;

import java.util.List;
import java.util.Map;

/**
 * A request as route keys and cost expressions see it, the same under the servlet and the WebFlux filter. It is
 * the root object of {@code #{...}} expressions: {@code #{header('X-Api-Key')}}, {@code #{pathVariable('id')}},
 * {@code #{principal}}, {@code #{clientAddress}}, {@code #{longHeader('X-Batch-Size', 1)}}.
 */
public abstract class HttpRequestView {

    private final Map<String, String> pathVariables;
    private final int trustedProxies;

    protected HttpRequestView(Map<String, String> pathVariables, int trustedProxies) {
        this.pathVariables = pathVariables;
        this.trustedProxies = trustedProxies;
    }

    /** The HTTP method, e.g. {@code GET}. */
    public abstract String getMethod();

    /** The path within the application, e.g. {@code /api/orders/7}. */
    public abstract String getPath();

    /** The first value of a header, or null. */
    public abstract String header(String name);

    /** Every value of a header, in order; empty when absent. */
    protected abstract List<String> headers(String name);

    /** The first value of a query parameter, or null. */
    public abstract String param(String name);

    /** The authenticated principal's name, or null. */
    public abstract String getPrincipal();

    /** The address of the connection's peer. */
    protected abstract String peerAddress();

    /** A variable of the matched path pattern, or null. */
    public String pathVariable(String name) {
        return pathVariables.get(name);
    }

    /** A header's value as a whole number, or {@code otherwise} when absent; not a number is a 400. */
    public long longHeader(String name, long otherwise) {
        String v = header(name);
        if (v == null) {
            return otherwise;
        }
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new InvalidRequestException("header " + name + " must be a whole number");
        }
    }

    /**
     * The client's address: the connection's peer, or, behind {@code sluice.web.trusted-proxies} = N trusted
     * proxies, the Nth address from the right of {@code X-Forwarded-For} (the leftmost when there are fewer), which
     * the outermost trusted proxy wrote; addresses further left were written by the client and are not trusted.
     */
    public String getClientAddress() {
        if (trustedProxies > 0) {
            java.util.ArrayList<String> hops = new java.util.ArrayList<>();
            for (String value : headers("X-Forwarded-For")) {
                for (String hop : value.split(",")) {
                    if (!hop.isBlank()) {
                        hops.add(hop.trim());
                    }
                }
            }
            if (!hops.isEmpty()) {
                return hops.get(Math.max(0, hops.size() - trustedProxies));
            }
        }
        return peerAddress();
    }
}
