/**
 * Sluice's API: rules, limits (one record per algorithm), the {@code RateLimiter}, decisions and the store
 * interface, with the in-memory store. The algorithms' transitions and the rule evaluator are internal; the
 * Redis store, which runs the same rules, is the one module that reads them.
 */
module io.sluice {
    exports io.sluice;
    // The IETF RateLimit header fields, shared by the server, the Spring filters and applications.
    exports io.sluice.http;
    exports io.sluice.internal to io.sluice.redis;
    exports io.sluice.internal.algorithm to io.sluice.redis;
}
