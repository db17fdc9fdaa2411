/** The Redis store: every decision is one Lua script on Redis standalone, Sentinel or Cluster (Lettuce). */
module io.sluice.redis {
    requires transitive io.sluice;
    // Transitive: the builder takes the application's own RedisClient or RedisClusterClient and ClientResources.
    requires transitive lettuce.core;
    // Closing Lettuce's client resources returns a Netty future.
    requires io.netty.common;

    exports io.sluice.redis;
}
