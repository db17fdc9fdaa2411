package io.sluice.server;

import io.sluice.Store;
import io.sluice.testkit.ManualClock;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * A {@link SluiceServer} on ephemeral loopback ports for one test, deciding on an in-memory store whose clock
 * the test moves (so windows and refills are exact), with a JDK {@link HttpClient} to talk to it.
 */
final class TestServer implements AutoCloseable {

    final ManualClock clock = new ManualClock();
    final Store store = Store.memory().clock(clock).build();
    final SluiceServer server;
    final List<Path> ruleFiles = new ArrayList<>();
    final HttpClient http;
    private final String scheme;
    private final String token;

    /**
     * A server of the given rule files' texts (written to {@code dir}); more settings via {@code extra}. The
     * client speaks HTTP/1.1, as curl and most API clients do on plain text (HTTP/2 is exercised over TLS and by
     * the gRPC tests).
     */
    static TestServer start(Path dir, List<String> ruleTexts, Consumer<SluiceServer.Builder> extra) {
        return new TestServer(dir, ruleTexts, extra, HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(10)).build(), "http", null);
    }

    static TestServer start(Path dir, String ruleText) {
        return start(dir, List.of(ruleText), b -> { });
    }

    TestServer(Path dir, List<String> ruleTexts, Consumer<SluiceServer.Builder> extra, HttpClient http, String scheme,
               String token) {
        this.http = http;
        this.scheme = scheme;
        this.token = token;
        try {
            for (int i = 0; i < ruleTexts.size(); i++) {
                Path file = dir.resolve("rules-" + i + ".yaml");
                Files.writeString(file, ruleTexts.get(i));
                ruleFiles.add(file);
            }
            SluiceServer.Builder b = SluiceServer.builder().httpPort(0).grpcPort(0).rules(ruleFiles).store(store)
                    .shutdown(Duration.ZERO, Duration.ofSeconds(5)).reloadInterval(Duration.ZERO);
            extra.accept(b);
            this.server = b.build().start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (io.sluice.rules.RuleFileException e) {
            throw new IllegalArgumentException(e);
        }
    }

    private static final long DAY_MICROS = 86_400_000_000L;

    /**
     * Moves the clock to the next midnight (UTC), as a new server's clock starts at one: every window of a second
     * to a day starts afresh and whole, so tests of a class can share one server (starting and stopping one is
     * most of a short test's time) without seeing each other's counts.
     */
    void nextDay() {
        clock.setMicros((clock.nowMicros() / DAY_MICROS + 1) * DAY_MICROS);
    }

    String base() {
        return scheme + "://127.0.0.1:" + server.httpPort();
    }

    HttpResponse<String> post(String path, String body) {
        return send(request(path).POST(HttpRequest.BodyPublishers.ofString(body)).build());
    }

    HttpResponse<String> get(String path) {
        return send(request(path).GET().build());
    }

    HttpRequest.Builder request(String path) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base() + path)).timeout(Duration.ofSeconds(20));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return b;
    }

    HttpResponse<String> send(HttpRequest request) {
        try {
            return http.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        server.close();
        store.close();
    }
}
