package io.sluice.bench.attack;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Steady checks on one rule and key from a few threads, each answer kept with when its request started and
 * ended, so that a probe can tell what was answered during a fault and when answers became normal again. Each
 * thread sends one request at a time and pauses {@code paceMs} between them: a load, not a flood.
 */
final class TimedLoad implements AutoCloseable {
    /** A failed exchange (timeout, connection refused): no HTTP status. */
    static final int FAILED = -1;

    /** One check: {@link System#nanoTime()} at start and end, and the HTTP status or {@link #FAILED}. */
    record Answer(long startNanos, long endNanos, int status) {}

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10)).build();
    private final HttpRequest request;
    private final long paceMs;
    private final List<Answer> answers = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();
    private volatile boolean running = true;

    TimedLoad(String baseUrl, String rule, String key, int threadCount, long paceMs) {
        this.paceMs = paceMs;
        request = HttpRequest.newBuilder(URI.create(baseUrl + "/v1/check")).timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"rule\":\"" + rule + "\",\"key\":\"" + key + "\"}"))
                .build();
        for (int i = 0; i < threadCount; i++) {
            Thread thread = new Thread(this::loop, "sluice-bench-load-" + key + "-" + i);
            thread.setDaemon(true);
            threads.add(thread);
            thread.start();
        }
    }

    private void loop() {
        while (running) {
            long start = System.nanoTime();
            int status;
            try {
                status = http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
            } catch (InterruptedException e) {
                return;
            } catch (Exception e) {
                status = FAILED;
            }
            synchronized (answers) {
                answers.add(new Answer(start, System.nanoTime(), status));
            }
            try {
                Thread.sleep(paceMs);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** The answers so far, ordered by when they ended. */
    List<Answer> answers() {
        synchronized (answers) {
            return new ArrayList<>(answers);
        }
    }

    /** Stops the threads after their request in flight (at most the request timeout). */
    @Override
    public void close() throws InterruptedException {
        running = false;
        for (Thread thread : threads) {
            thread.join(15_000);
        }
    }
}
