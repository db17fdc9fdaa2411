package io.sluice.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Closing a store never waits without bound for Lettuce's shutdown. */
class PortsTest {

    @Test
    @Timeout(30)
    void aShutdownThatNeverFinishesIsAbandonedAfterTheBound() {
        // What Lettuce's shutdownAsync returns for a client whose cluster connect timed out during setup: a future
        // that never completes. Before the bound, close() hung on it.
        CompletableFuture<Void> never = new CompletableFuture<>();
        assertThat(Ports.awaitShutdown(never, Duration.ofMillis(10), "a client")).isFalse();
        assertThat(never).isNotDone();
    }

    @Test
    void aFinishedShutdownIsReportedAsSuch() {
        assertThat(Ports.awaitShutdown(CompletableFuture.completedFuture(null), Duration.ofMillis(10), "a client"))
                .isTrue();
        assertThat(Ports.awaitShutdown(CompletableFuture.failedFuture(new IllegalStateException("boom")),
                Duration.ofMillis(10), "a client")).isFalse();
    }
}
