package io.sluice.client;

import io.sluice.Store;
import io.sluice.testkit.ManualClock;
import io.sluice.testkit.StoreContract;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The store contract on the remote store against a real {@code sluice serve} process deciding in memory, on the
 * contract's manual clock (the server runs with {@code --clock client}).
 */
class RemoteMemoryContractIT extends StoreContract {

    private static ServeProcess server;

    @BeforeAll
    static void startServer() {
        server = ServeProcess.start("--store", "memory", "--clock", "client");
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
