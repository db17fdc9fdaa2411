package io.sluice.redis.internal;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.resource.ClientResources;

/**
 * Where a store's Lettuce client comes from: created by the store (with its own {@link ClientResources}, or on
 * resources the application passed in), or the application's own client. The store shuts down only what it
 * created: its connections always, the client and the resources only when it made them.
 *
 * @param client    the application's {@link RedisClient} or {@link RedisClusterClient}, or null to create one
 * @param resources the application's resources for a client the store creates, or null to create them too
 */
public record ClientSource(AbstractRedisClient client, ClientResources resources) {

    /** The store creates its client and its resources, and shuts both down on close. */
    public static final ClientSource OWN = new ClientSource(null, null);

    public ClientSource {
        if (client != null && resources != null) {
            throw new IllegalArgumentException("give either a client or client resources, not both (a client "
                    + "already has its resources)");
        }
        if (client != null && !(client instanceof RedisClient) && !(client instanceof RedisClusterClient)) {
            throw new IllegalArgumentException("client must be a RedisClient or a RedisClusterClient, was "
                    + client.getClass().getName());
        }
    }

    /** Whether the application's client is a cluster client. */
    public boolean clusterClient() {
        return client instanceof RedisClusterClient;
    }

    /** For messages: which client the store uses when it was given one. */
    public String describe() {
        return client == null ? null : "the application's " + client.getClass().getSimpleName();
    }
}
