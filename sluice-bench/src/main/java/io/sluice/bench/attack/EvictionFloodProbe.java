package io.sluice.bench.attack;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A new key with every request, for a fixed time, {@link #IN_FLIGHT} requests outstanding: the in-memory store
 * bounded at {@code max_keys} must evict as it goes (docs/memory-store.md), so the RSS stays flat and the
 * bystander keeps its latency however far past the bound the flood goes.
 */
final class EvictionFloodProbe implements Probe {
    private static final int IN_FLIGHT = 32;

    private final int maxKeys;
    private final int seconds;

    EvictionFloodProbe(int maxKeys, int seconds) {
        this.maxKeys = maxKeys;
        this.seconds = seconds;
    }

    @Override
    public String name() {
        return "eviction_flood";
    }

    @Override
    public String describe() {
        return String.format("a new key per request on rule bench, %d in flight for %d s, past memory?max_keys=%,d",
                IN_FLIGHT, seconds, maxKeys);
    }

    @Override
    public Outcome run(Target target) throws Exception {
        Answers answers = new Answers();
        Semaphore slots = new Semaphore(IN_FLIGHT);
        AtomicLong sent = new AtomicLong();
        URI uri = URI.create(target.baseUrl() + "/v1/check");
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        while (System.nanoTime() < end) {
            slots.acquire();
            HttpRequest request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"rule\":\"bench\",\"key\":\"flood:"
                            + sent.getAndIncrement() + "\"}")).build();
            target.http().sendAsync(request, HttpResponse.BodyHandlers.discarding()).whenComplete((r, e) -> {
                answers.add(e == null ? Integer.toString(r.statusCode()) : "failed: " + e.getClass().getSimpleName());
                slots.release();
            });
        }
        slots.acquire(IN_FLIGHT);
        return new Outcome(answers, String.format("%,d new keys, %.1f× the bound", sent.get(),
                (double) sent.get() / maxKeys));
    }
}
