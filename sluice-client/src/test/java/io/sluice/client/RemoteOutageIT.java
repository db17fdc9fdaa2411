package io.sluice.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.Decision;
import io.sluice.FailurePolicy;
import io.sluice.FixedWindow;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The remote store when {@code sluice serve} goes away: a stopped and restarted server, a frozen one
 * ({@code SIGSTOP}), and repeated cycles of both, against a real server process. Each rule's policy decides
 * within one timeout, the breaker then answers at local speed, the store recovers by itself, and no thread or
 * connection is left behind.
 */
class RemoteOutageIT {

    private static final Duration TIMEOUT = Duration.ofMillis(500);
    private static final Duration COOL_DOWN = Duration.ofMillis(500);
    /** The store timeout of {@link #repeatedOutagesLeakNoThreadAndNoConnection}'s cycles. */
    private static final Duration CYCLE_TIMEOUT = Duration.ofSeconds(1);

    private static ServeProcess server;

    @BeforeAll
    static void startServer() {
        server = ServeProcess.start("--store", "memory");
        // A cold server on a loaded machine can take longer than TIMEOUT for its first calls: warm it up.
        try (RemoteStore store = store(Duration.ofSeconds(30));
             RateLimiter warm = limiter(store, FailurePolicy.raise())) {
            for (int i = 0; i < 500; i++) {
                warm.tryAcquire("warm");
            }
        }
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    private static RemoteStore store() {
        return store(TIMEOUT);
    }

    private static RemoteStore store(Duration timeout) {
        return RemoteStore.builder().uri(server.uri()).timeout(timeout).circuitBreaker(1, COOL_DOWN).build();
    }

    private static RateLimiter limiter(RemoteStore store, FailurePolicy policy) {
        Rule rule = Rule.of("outage-" + UUID.randomUUID(), FixedWindow.of(1_000_000, Duration.ofHours(1)))
                .withFailurePolicy(policy);
        return RateLimiter.builder(rule).store(store).build();
    }

    @Test
    void aStoppedServerIsDecidedByEachPolicyAndARestartedOneDecidesAgain() {
        try (RemoteStore store = store()) {
            RateLimiter open = limiter(store, FailurePolicy.failOpen());
            RateLimiter closed = limiter(store, FailurePolicy.failClosed());
            RateLimiter raise = limiter(store, FailurePolicy.raise());
            // The store's first call opens its connection, which a loaded machine can make slower than TIMEOUT.
            eventually(() -> open.tryAcquire("k").source() == Decision.Source.STORE);
            eventually(() -> closed.tryAcquire("k").source() == Decision.Source.STORE);
            server.stop();
            try {
                Decision o = open.tryAcquire("k");
                assertThat(o.allowed()).isTrue();
                assertThat(o.source()).isEqualTo(Decision.Source.FAIL_OPEN);
                Decision c = closed.tryAcquire("k");
                assertThat(c.allowed()).isFalse();
                assertThat(c.source()).isEqualTo(Decision.Source.FAIL_CLOSED);
                assertThat(c.retryAfterMicros()).isPositive();
                assertThatThrownBy(() -> raise.tryAcquire("k")).isInstanceOf(RemoteUnavailableException.class)
                        .hasMessageContaining("sluice serve at");
            } finally {
                server.start();
            }
            // A new process: its memory is empty and it has never seen the rules; they are registered again.
            eventually(() -> open.tryAcquire("k").source() == Decision.Source.STORE);
            assertThat(raise.tryAcquire("k").source()).isEqualTo(Decision.Source.STORE);
        }
    }

    @Test
    void aFrozenServerCostsOneTimeoutThenTheBreakerAnswersAtOnce() throws Exception {
        try (RemoteStore store = store()) {
            RateLimiter closed = limiter(store, FailurePolicy.failClosed());
            RateLimiter fallback = limiter(store, FailurePolicy.localFallback(0.5));
            eventually(() -> closed.tryAcquire("k").source() == Decision.Source.STORE);
            eventually(() -> fallback.tryAcquire("k").source() == Decision.Source.STORE);
            server.freeze();
            try {
                long start = System.nanoTime();
                Decision first = closed.tryAcquire("k");
                long firstMillis = (System.nanoTime() - start) / 1_000_000;
                assertThat(first.source()).isEqualTo(Decision.Source.FAIL_CLOSED);
                // The policy applied after the timeout, not before, and within one timeout and a generous second.
                assertThat(firstMillis).isGreaterThanOrEqualTo(TIMEOUT.toMillis() - 50)
                        .isLessThan(TIMEOUT.plusSeconds(1).toMillis());
                // The breaker is open now: calls are decided without waiting for the server. A call that went to
                // the frozen server would take a whole TIMEOUT (the first did); each call is held below that on
                // its own, so one slow moment of a loaded machine is not summed over all of them.
                for (int i = 0; i < 20; i++) {
                    start = System.nanoTime();
                    assertThat(closed.tryAcquire("k").source()).isEqualTo(Decision.Source.FAIL_CLOSED);
                    assertThat((System.nanoTime() - start) / 1_000_000).as("call %d with the breaker open", i)
                            .isLessThan(TIMEOUT.toMillis());
                }
                start = System.nanoTime();
                Decision local = fallback.tryAcquireAsync("k", 1).get(5, TimeUnit.SECONDS);
                assertThat(local.source()).isEqualTo(Decision.Source.LOCAL_FALLBACK);
                assertThat(local.allowed()).isTrue();
                assertThat((System.nanoTime() - start) / 1_000_000).as("the local fallback")
                        .isLessThan(TIMEOUT.toMillis());
            } finally {
                server.thaw();
            }
            eventually(() -> closed.tryAcquire("k").source() == Decision.Source.STORE);
        }
    }

    /**
     * Two cycles first, so that what the client creates lazily and keeps (shared event loops) exists before the
     * threads are counted; then three more, each of which costs one store timeout (the freeze). A cycle that
     * leaked a thread or a connection would show after one; three keep the count clear of a thread of
     * someone else's ending meanwhile.
     */
    @Test
    void repeatedOutagesLeakNoThreadAndNoConnection() throws Exception {
        cycle();
        cycle();
        int threads = ownThreads();
        for (int i = 0; i < 3; i++) {
            cycle();
        }
        eventually(() -> connections(server.port()) == 0);
        assertThat(ownThreads()).isLessThanOrEqualTo(threads);
    }

    /**
     * One store's life: 64 calls in flight on one connection, a freeze decided by the policy, recovery, close.
     */
    private static void cycle() throws Exception {
        // The freeze costs one store timeout per cycle, five cycles: a short one (it was 5 s, 25 s of the class's
        // 42). A loaded machine can take longer than it for 64 calls at once; such a batch (failed open, the
        // breaker then open for COOL_DOWN) is sent again until all 64 are the store's, as a long timeout allowed.
        try (RemoteStore store = store(CYCLE_TIMEOUT)) {
            RateLimiter open = limiter(store, FailurePolicy.failOpen());
            eventually(() -> {
                List<CompletableFuture<Decision>> inFlight = new ArrayList<>();
                for (int i = 0; i < 64; i++) {
                    inFlight.add(open.tryAcquireAsync("k" + i, 1));
                }
                boolean all = true;
                for (CompletableFuture<Decision> f : inFlight) {
                    all &= f.get(30, TimeUnit.SECONDS).source() == Decision.Source.STORE;
                }
                return all;
            });
            assertThat(connections(server.port())).isEqualTo(1);
            server.freeze();
            try {
                assertThat(open.tryAcquire("k").source()).isEqualTo(Decision.Source.FAIL_OPEN);
            } finally {
                server.thaw();
            }
            eventually(() -> open.tryAcquire("k").source() == Decision.Source.STORE);
        }
    }

    /**
     * Live threads of this JVM, without Armeria's shared event loops (a fixed pool, created lazily as
     * connections land on its loops) and JUnit's own.
     */
    private static int ownThreads() {
        int n = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.isAlive() && !t.getName().startsWith("armeria-common-worker")) {
                n++;
            }
        }
        return n;
    }

    /** Established TCP connections from any local socket to {@code port} on loopback (client ends only). */
    static int connections(int port) throws IOException {
        String hex = String.format(":%04X", port);
        int n = 0;
        for (String table : new String[] {"/proc/net/tcp", "/proc/net/tcp6"}) {
            Path p = Path.of(table);
            if (!Files.exists(p)) {
                continue;
            }
            for (String line : Files.readAllLines(p)) {
                String[] f = line.trim().split("\\s+");
                if (f.length > 3 && f[2].endsWith(hex) && f[3].equals("01")) {
                    n++;
                }
            }
        }
        return n;
    }

    private static void eventually(CheckedCondition condition) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        AssertionError last = null;
        while (System.nanoTime() < deadline) {
            try {
                if (condition.holds()) {
                    return;
                }
            } catch (Exception | AssertionError e) {
                last = e instanceof AssertionError a ? a : new AssertionError(e);
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
        throw last != null ? last : new AssertionError("not within 30 s");
    }

    @FunctionalInterface
    private interface CheckedCondition {
        boolean holds() throws Exception;
    }
}
