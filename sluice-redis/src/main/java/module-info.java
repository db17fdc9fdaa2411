/** The Redis store: every decision is one Lua script on Redis standalone, Sentinel or Cluster (Lettuce). */
// "module": the two modules the internal package is exported to are built after this one, so javac cannot see them.
@SuppressWarnings("module")
module io.sluice.redis {
    requires transitive io.sluice;
    // Transitive: the builder takes the application's own RedisClient or RedisClusterClient and ClientResources.
    requires transitive lettuce.core;
    // Closing Lettuce's client resources returns a Netty future.
    requires io.netty.common;

    exports io.sluice.redis;
    // The server and the remote client build their stores from the same settings, breaker and failure policies
    // (both are automatic modules, named in their jars' manifests).
    exports io.sluice.redis.internal to io.sluice.server, io.sluice.client;
}
