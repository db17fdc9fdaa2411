package io.sluice.client;

import io.sluice.Store;
import io.sluice.testkit.ManualClock;
import io.sluice.testkit.StoreContract;
import java.time.Duration;
import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.SharedRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The store contract on the remote store against a real {@code sluice serve} process deciding in a real
 * redis-server (client-time mode on the contract's manual clock).
 */
@ExtendWith(SharedRedis.class)
class RemoteRedisContractIT extends StoreContract {

    private static ServeProcess server;

    @BeforeAll
    static void startServer() {
        server = ServeProcess.start("--store", RedisServer.shared().uri(), "--clock", "client");
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    @Override
    protected Store newStore(ManualClock clock) {
        // A timeout far above any answer time even on a loaded machine: the contract is about decisions;
        // RemoteOutageIT is about timeouts.
        return RemoteStore.builder().uri(server.uri()).clock(clock).timeout(Duration.ofSeconds(30)).build();
    }
}
