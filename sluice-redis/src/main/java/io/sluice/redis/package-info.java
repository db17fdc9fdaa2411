/**
 * The Redis store: {@link io.sluice.redis.RedisStore} decides every request with one atomic Lua script call on
 * Redis standalone, Sentinel or Cluster. The script protocol (keys, arguments, state layout, how to port an
 * algorithm) is in {@code docs/redis-script-protocol.md}.
 */
package io.sluice.redis;
