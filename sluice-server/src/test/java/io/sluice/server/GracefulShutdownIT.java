package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Decision;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.Store;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Stopping the server lets a check that is already being decided finish and answer. */
class GracefulShutdownIT {

    /** A memory store whose decisions wait for the test to let them go. */
    static final class HeldStore implements Store {
        final Store memory = Store.memory().build();
        final CountDownLatch entered = new CountDownLatch(1);
        final CompletableFuture<Void> release = new CompletableFuture<>();

        @Override
        public Decision decide(Rule rule, String key, Request request) {
            return decideAsync(rule, key, request).join();
        }

        @Override
        public CompletableFuture<Decision> decideAsync(Rule rule, String key, Request request) {
            entered.countDown();
            return release.thenApply(x -> memory.decide(rule, key, request));
        }

        @Override
        public boolean release(Rule rule, String key, long lease) {
            return memory.release(rule, key, lease);
        }

        @Override
        public CompletableFuture<Boolean> releaseAsync(Rule rule, String key, long lease) {
            return memory.releaseAsync(rule, key, lease);
        }

        @Override
        public void reset(Rule rule, String key) {
            memory.reset(rule, key);
        }
    }

    @TempDir
    Path dir;

    @Test
    void aCheckInFlightFinishesWhileTheServerStops() throws Exception {
        Path rules = dir.resolve("rules.yaml");
        Files.writeString(rules, "limits:\n  l: {algorithm: fixed_window, limit: 5, window: 1m}\nrules:\n"
                + "  api: {limits: [l]}\n");
        HeldStore store = new HeldStore();
        SluiceServer server = SluiceServer.builder().httpPort(0).grpcPort(0).rules(List.of(rules)).store(store)
                .shutdown(Duration.ofMillis(200), Duration.ofSeconds(20)).build().start();
        HttpClient client = HttpClient.newHttpClient();
        CompletableFuture<HttpResponse<String>> inFlight = client.sendAsync(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + server.httpPort() + "/v1/check"))
                .POST(HttpRequest.BodyPublishers.ofString("{\"rule\": \"api\", \"key\": \"k\"}")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(store.entered.await(30, TimeUnit.SECONDS)).isTrue();

        CompletableFuture<Void> stopped = server.stopAsync();
        Thread.sleep(300);
        assertThat(stopped).isNotDone();
        assertThat(inFlight).isNotDone();

        store.release.complete(null);
        HttpResponse<String> response = inFlight.get(30, TimeUnit.SECONDS);
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).contains("\"allowed\":true");
        stopped.get(30, TimeUnit.SECONDS);
        store.memory.close();
    }
}
