package io.sluice.bench.attack;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * An ordinary client that keeps using the server while a probe runs: one request every {@link #INTERVAL_MS} ms
 * on its own connection, one key of its own, each latency kept. A low, steady rate, so that what it measures is
 * what the attack does to a well-behaved caller, not its own load.
 */
final class Bystander implements AutoCloseable {
    static final int INTERVAL_MS = 20;

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10)).build();
    private final HttpRequest request;
    private final List<Long> latenciesUs = Collections.synchronizedList(new ArrayList<>());
    private final Answers answers = new Answers();
    private final Thread thread;
    private volatile boolean running = true;

    Bystander(String baseUrl) {
        request = HttpRequest.newBuilder(URI.create(baseUrl + "/v1/check")).timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"rule\":\"bench\",\"key\":\"bystander\"}")).build();
        thread = new Thread(this::loop, "sluice-bench-bystander");
        thread.setDaemon(true);
        thread.start();
    }

    private void loop() {
        while (running) {
            long start = System.nanoTime();
            try {
                int status = http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
                answers.add(Integer.toString(status));
                latenciesUs.add((System.nanoTime() - start) / 1_000);
            } catch (Exception e) {
                if (!running) {
                    return; // interrupted by close: not an answer of the server's
                }
                answers.add("failed: " + e.getClass().getSimpleName());
            }
            try {
                Thread.sleep(Math.max(0, INTERVAL_MS - (System.nanoTime() - start) / 1_000_000));
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** The {@code p}th percentile (0..100) of the latencies so far, µs; NaN before the first answer. */
    double percentileUs(double p) {
        List<Long> sorted;
        synchronized (latenciesUs) {
            sorted = new ArrayList<>(latenciesUs);
        }
        if (sorted.isEmpty()) {
            return Double.NaN;
        }
        Collections.sort(sorted);
        int index = (int) Math.ceil(p / 100 * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, index)));
    }

    Answers answers() {
        return answers;
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        thread.interrupt();
        thread.join(15_000);
    }
}
