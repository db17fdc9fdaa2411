package io.sluice.client;

import io.sluice.Store;
import io.sluice.testkit.ManualClock;
import io.sluice.testkit.SettleContract;
import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.SharedRedis;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Estimated charges and settlements through the remote store, against a real {@code sluice serve} process
 * deciding in a real redis-server (exact mode, client time on the contract's manual clock): the contract as the
 * Redis store passes it in process ({@code RedisSettleContractIT}).
 */
@ExtendWith(SharedRedis.class)
class RemoteRedisSettleContractIT extends SettleContract {

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
        return RemoteStore.builder().uri(server.uri()).clock(clock).timeout(Duration.ofSeconds(30)).build();
    }
}
