package io.sluice.client;

import io.sluice.Store;
import io.sluice.testkit.ManualClock;
import io.sluice.testkit.SettleContract;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * Estimated charges and settlements through the remote store, against a real {@code sluice serve} process
 * deciding in memory on the contract's manual clock ({@code --clock client}): the ticket is kept in the
 * server's store, and the contract holds as it does in process.
 */
class RemoteMemorySettleContractIT extends SettleContract {

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
        // A timeout far above any answer time even on a loaded machine: the contract is about settlements.
        return RemoteStore.builder().uri(server.uri()).clock(clock).timeout(Duration.ofSeconds(30)).build();
    }
}
