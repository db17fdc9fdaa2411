/**
 * Implementation of the Redis store: the script assembly, the key layout, the per-call arguments, and the
 * narrow {@link io.sluice.redis.internal.RedisPort} over Lettuce. Not API: public only for tests and other
 * Sluice modules; it may change in any release.
 */
package io.sluice.redis.internal;
