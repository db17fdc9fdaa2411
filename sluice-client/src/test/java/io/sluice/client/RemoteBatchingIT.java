package io.sluice.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Decision;
import io.sluice.FailurePolicy;
import io.sluice.FixedWindow;
import io.sluice.RateLimiter;
import io.sluice.Request;
import io.sluice.Rule;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Batching against a real {@code sluice serve} process: many concurrent calls go in few requests (counted by the
 * server's own metrics), each call gets its own answer and its own failure, a lone call goes alone, and a frozen
 * server fails queued calls within their own timeout, not one more.
 *
 * <p>The tests share one server and count its calls, so the frozen-server test runs last: the calls it sent to
 * the frozen server are decided after the thaw, when a later test would already have read its starting count
 * (a clean-clone run counted 20,042 calls for 20,000 sent, the frozen test's 42 among them).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RemoteBatchingIT {

    private static final int LIMIT = 10_000;

    private static ServeProcess server;

    @BeforeAll
    static void startServer() {
        server = ServeProcess.start("--store", "memory");
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    private static Rule rule() {
        return Rule.of("batch-" + UUID.randomUUID(), FixedWindow.of(LIMIT, Duration.ofHours(1)));
    }

    private static RemoteStore store() {
        return RemoteStore.builder().uri(server.uri()).timeout(Duration.ofSeconds(30)).build();
    }

    @Test
    void concurrentCallsEachGetTheirOwnAnswerAndOneCallsBadInputFailsOnlyIt() throws Exception {
        Rule rule = rule();
        try (RemoteStore store = store(); RateLimiter limiter = RateLimiter.builder(rule).store(store).build()) {
            limiter.tryAcquire("warm"); // registers the rule, so the burst below is decided at its first attempt
            Requests before = Requests.now();
            int n = 600;
            List<CompletableFuture<Decision>> good = new ArrayList<>();
            List<CompletableFuture<Decision>> bad = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                // Key i is charged i + 1 permits: each answer's remaining is this call's and no other's.
                good.add(limiter.tryAcquireAsync("key-" + i, i + 1));
                if (i % 10 == 0) {
                    // More permits than the rule allows, past the limiter's own check: the server refuses this call.
                    bad.add(store.decideAsync(rule, "bad-" + i, Request.tryAcquire(LIMIT + 1)));
                }
            }
            for (int i = 0; i < n; i++) {
                Decision d = good.get(i).get(60, TimeUnit.SECONDS);
                assertThat(d.allowed()).as("call %d", i).isTrue();
                assertThat(d.source()).isEqualTo(Decision.Source.STORE);
                assertThat(d.remaining()).as("call %d", i).isEqualTo(LIMIT - (i + 1));
            }
            for (CompletableFuture<Decision> f : bad) {
                assertThat(f).failsWithin(Duration.ofSeconds(60)).withThrowableThat().havingRootCause()
                        .isInstanceOf(RemoteStoreException.class).withMessageContaining("permits");
            }
            // Nothing was charged by the refused calls, nor twice by any call (a peek of 1 answers what would remain
            // after it).
            for (int i = 0; i < n; i += 97) {
                assertThat(limiter.peek("key-" + i, 1).remaining()).isEqualTo(LIMIT - (i + 1) - 1);
            }
            for (int i = 0; i < n; i += 10) {
                assertThat(limiter.peek("bad-" + i, 1).remaining()).isEqualTo(LIMIT - 1);
            }
            Requests after = Requests.now();
            long calls = after.calls() - before.calls();
            long requests = after.requests() - before.requests();
            assertThat(calls).isGreaterThanOrEqualTo(n + bad.size());
            // All of them were made at once: most waited and went together, 64 to a request.
            assertThat(requests).as("%d requests for %d calls", requests, calls).isLessThan(calls / 8);
        }
    }

    /**
     * The bench's load: 64 decisions in flight from one process. Prints the requests per decision the server
     * counted, a figure machine load does not distort (a slower server only makes the batches larger).
     */
    @Test
    void sixtyFourInFlightShareFewRequests() throws Exception {
        Rule rule = rule();
        try (RemoteStore store = store(); RateLimiter limiter = RateLimiter.builder(rule).store(store).build()) {
            limiter.tryAcquire("warm");
            Requests before = Requests.now();
            int total = 20_000;
            Semaphore inFlight = new Semaphore(64);
            AtomicLong wrong = new AtomicLong();
            List<CompletableFuture<Decision>> last = new ArrayList<>();
            for (int i = 0; i < total; i++) {
                inFlight.acquire();
                CompletableFuture<Decision> f = limiter.tryAcquireAsync("k" + (i % 1000), 1);
                f.whenComplete((d, e) -> {
                    if (e != null || d.source() != Decision.Source.STORE) {
                        wrong.incrementAndGet();
                    }
                    inFlight.release();
                });
                if (i >= total - 64) {
                    last.add(f);
                }
            }
            for (CompletableFuture<Decision> f : last) {
                f.get(60, TimeUnit.SECONDS);
            }
            assertThat(inFlight.tryAcquire(64, 60, TimeUnit.SECONDS)).isTrue();
            Requests after = Requests.now();
            long calls = after.calls() - before.calls();
            long requests = after.requests() - before.requests();
            System.out.printf("64 in flight: %d decisions in %d requests (%d batches carrying %d calls): %.4f requests"
                    + " per decision%n", calls, requests, after.batches() - before.batches(),
                    after.batchCalls() - before.batchCalls(), requests / (double) calls);
            assertThat(wrong.get()).isZero();
            assertThat(calls).isEqualTo(total);
            // Four requests out and 60 calls waiting: about 12 calls a request measured; 4 leaves room for a loaded
            // machine.
            assertThat(requests * 4).as("%d requests for %d calls", requests, calls).isLessThan(calls);
        }
    }

    @Test
    void aLoneCallGoesAloneAtOnce() throws Exception {
        Rule rule = rule();
        try (RemoteStore store = store(); RateLimiter limiter = RateLimiter.builder(rule).store(store).build()) {
            limiter.tryAcquire("warm");
            Requests before = Requests.now();
            for (int i = 0; i < 50; i++) {
                assertThat(limiter.tryAcquire("k").remaining()).isEqualTo(LIMIT - 1 - i);
            }
            Requests after = Requests.now();
            assertThat(after.batches() - before.batches()).isZero();
            assertThat(after.requests() - before.requests()).isEqualTo(50);
        }
    }

    @Test
    void batchingOffSendsEveryCallAlone() throws Exception {
        Rule rule = rule();
        try (RemoteStore store = RemoteStore.builder().uri(server.uri()).timeout(Duration.ofSeconds(30))
                .batching(1, 1).build(); RateLimiter limiter = RateLimiter.builder(rule).store(store).build()) {
            limiter.tryAcquire("warm");
            Requests before = Requests.now();
            List<CompletableFuture<Decision>> all = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                all.add(limiter.tryAcquireAsync("k" + i, 1));
            }
            for (CompletableFuture<Decision> f : all) {
                assertThat(f.get(60, TimeUnit.SECONDS).allowed()).isTrue();
            }
            Requests after = Requests.now();
            assertThat(after.batches() - before.batches()).isZero();
            assertThat(after.requests() - before.requests()).isEqualTo(100);
        }
    }

    /**
     * Four calls go out alone to a frozen server; the others queue behind them. Each is decided by the policy when
     * its own timeout ends: a queued call is not sent to wait a second timeout once the first four fail.
     */
    @Test
    @Order(Integer.MAX_VALUE)   // last: see the class comment
    void aFrozenServerFailsQueuedCallsWithinTheirOwnTimeout() throws Exception {
        Duration timeout = Duration.ofSeconds(1);
        Rule rule = rule().withFailurePolicy(FailurePolicy.failOpen());
        // A breaker that stays closed: every call goes to the server, none is answered by the open breaker.
        try (RemoteStore store = RemoteStore.builder().uri(server.uri()).timeout(timeout)
                .circuitBreaker(1000, Duration.ofSeconds(1)).build();
             RateLimiter limiter = RateLimiter.builder(rule).store(store).build()) {
            // The connection and the rule are ready before the freeze (a loaded machine may need a few tries).
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (limiter.tryAcquire("warm").source() != Decision.Source.STORE && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            server.freeze();
            try {
                List<CompletableFuture<Long>> elapsed = new ArrayList<>();
                for (int i = 0; i < 64; i++) {
                    long start = System.nanoTime();
                    elapsed.add(limiter.tryAcquireAsync("k" + i, 1).thenApply(d -> {
                        assertThat(d.source()).isEqualTo(Decision.Source.FAIL_OPEN);
                        return (System.nanoTime() - start) / 1_000_000;
                    }));
                }
                for (CompletableFuture<Long> f : elapsed) {
                    long millis;
                    try {
                        millis = f.get(30, TimeUnit.SECONDS);
                    } catch (java.util.concurrent.ExecutionException e) {
                        throw new AssertionError(e.getCause());
                    }
                    // Not before its timeout; and well before two (a queued call sent after the first four failed
                    // would wait a whole second timeout).
                    assertThat(millis).isGreaterThanOrEqualTo(timeout.toMillis() - 50)
                            .isLessThan(timeout.toMillis() * 2 - 300);
                }
            } finally {
                server.thaw();
            }
        }
    }

    /** What the server counted: its store requests, single and batched, and the calls batches carried. */
    private record Requests(long single, long batches, long batchCalls) {

        private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

        long requests() {
            return single + batches;
        }

        long calls() {
            return single + batchCalls;
        }

        static Requests now() {
            String text;
            try {
                text = HTTP.send(HttpRequest.newBuilder(URI.create(server.uri() + "/metrics"))
                        .timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString()).body();
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new CompletionException(e);
            }
            return new Requests(value(text, "sluice_check_seconds_count\\{api=\"store\"\\}"),
                    value(text, "sluice_store_batch_calls_count"), value(text, "sluice_store_batch_calls_sum"));
        }

        private static long value(String text, String name) {
            Matcher m = Pattern.compile("(?m)^" + name + " (\\S+)$").matcher(text);
            return m.find() ? (long) Double.parseDouble(m.group(1)) : 0;
        }
    }
}
