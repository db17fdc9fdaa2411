package io.sluice.redis.failure;

import io.sluice.redis.RedisStore;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Decision;
import io.sluice.FailurePolicy;
import io.sluice.FixedWindow;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.SluiceListener;
import io.sluice.SluiceListener.BreakerState;
import io.sluice.testkit.redis.RedisServer;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A hundred short outages in a row, alternating a {@code CLIENT PAUSE WRITE} (timeouts: the breaker opens, probes,
 * closes) and a {@code CLIENT KILL} of the store's connection (Lettuce reconnects): afterwards the process has no
 * more threads and Redis no more client connections than after the first few, and closing the store gives back
 * every thread and connection it took.
 */
class OutageCyclesIT {

    private static final Duration TIMEOUT = Duration.ofMillis(50);
    private static final Duration COOL_DOWN = Duration.ofMillis(50);
    /**
     * Longer than the synchronous wait bound (timeout + 300 ms): the call made during the pause is decided by
     * the policy even when Lettuce's timer runs late on a loaded machine. The test unpauses as soon as it was.
     */
    private static final Duration PAUSE = TIMEOUT.plusMillis(350);
    private static final int CYCLES = 100;
    private static final int WARM_UP_CYCLES = 10;
    private static final Duration SETTLE = Duration.ofSeconds(10);

    private static RedisServer server;

    @BeforeAll
    static void startOwnServer() {
        server = RedisServer.start();
        // A first connection in a cold JVM loads Lettuce and Netty and can take longer than this test's 50 ms
        // timeout, which bounds the connection handshake too.
        RedisStore.builder().uri(server.uri()).build().close();
    }

    @AfterAll
    static void stopOwnServer() {
        server.close();
    }

    @Test
    void aHundredOutagesLeakNoThreadAndNoConnection() {
        Rule rule = Rule.of("cycles", FixedWindow.of(1_000_000, Duration.ofDays(1)))
                .withFailurePolicy(FailurePolicy.failOpen());
        AtomicInteger opened = new AtomicInteger();
        AtomicInteger closed = new AtomicInteger();
        SluiceListener listener = new SluiceListener() {
            @Override
            public void onBreakerTransition(BreakerState from, BreakerState to, String reason) {
                if (from == BreakerState.CLOSED) {
                    opened.incrementAndGet();
                } else if (to == BreakerState.CLOSED) {
                    closed.incrementAndGet();
                }
            }
        };
        int threadsBefore = liveThreads();
        int clientsBefore = connectedClients();
        RedisStore store = RedisStore.builder().uri(server.uri()).prefix("cycles").timeout(TIMEOUT)
                .circuitBreaker(1, COOL_DOWN).listener(listener).build();
        try (RateLimiter limiter = RateLimiter.builder(rule).store(store).build()) {
            for (int i = 0; i < WARM_UP_CYCLES; i++) {
                cycle(limiter, i);
            }
            int threadsWarm = liveThreads();
            int clientsWarm = connectedClients();
            int openedWarm = opened.get();

            long start = System.nanoTime();
            for (int i = 0; i < CYCLES; i++) {
                cycle(limiter, i);
            }
            long millis = (System.nanoTime() - start) / 1_000_000;

            assertThat(opened.get() - openedWarm).as("every pause opened the breaker").isGreaterThanOrEqualTo(CYCLES / 2);
            assertThat(closed.get()).as("and every opening was followed by a close").isEqualTo(opened.get());
            assertThat(settle(OutageCyclesIT::liveThreads, threadsWarm)).as("live threads after " + CYCLES + " outages")
                    .isLessThanOrEqualTo(threadsWarm);
            assertThat(settle(OutageCyclesIT::connectedClients, clientsWarm)).as("Redis connected_clients")
                    .isEqualTo(clientsWarm);
            System.out.printf("%d outage cycles in %d ms; threads %d before the store, %d warm, %d after; "
                            + "connected_clients %d before, %d warm, %d after%n", CYCLES, millis, threadsBefore,
                    threadsWarm, liveThreads(), clientsBefore, clientsWarm, connectedClients());
        } finally {
            store.close();
        }
        assertThat(settle(OutageCyclesIT::liveThreads, threadsBefore)).as("closing the store ends its threads")
                .isLessThanOrEqualTo(threadsBefore);
        assertThat(settle(OutageCyclesIT::connectedClients, clientsBefore)).as("and closes its connections")
                .isEqualTo(clientsBefore);
    }

    /**
     * One outage and the recovery from it. Even cycles: the server pauses clients; the first call times out
     * and opens the breaker (threshold 1), calls are then decided by fail_open at once; after the pause the
     * probe closes the breaker. Odd cycles: the server drops the store's connection; Lettuce reconnects.
     */
    private static void cycle(RateLimiter limiter, int i) {
        if (i % 2 == 0) {
            // WRITE pauses scripts too (EVALSHA may write) but, unlike ALL, lets CLIENT UNPAUSE through.
            server.call("CLIENT", "PAUSE", Long.toString(PAUSE.toMillis()), "WRITE");
            Decision d = limiter.tryAcquire("k");
            server.call("CLIENT", "UNPAUSE");
            assertThat(d.source()).as("cycle %d: the call during the pause", i).isEqualTo(Decision.Source.FAIL_OPEN);
        } else {
            assertThat((Long) server.call("CLIENT", "KILL", "TYPE", "normal")).as("cycle %d: connections killed", i)
                    .isPositive();
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (limiter.tryAcquire("k").source() != Decision.Source.STORE) {
            assertThat(System.nanoTime()).as("cycle %d: Redis decides again within 5 s", i).isLessThan(deadline);
            sleepMillis(5);
        }
    }

    private static int liveThreads() {
        return ManagementFactory.getThreadMXBean().getThreadCount();
    }

    private static final Pattern CONNECTED = Pattern.compile("connected_clients:(\\d+)");

    /** Redis's count of client connections, less the one asking. */
    private static int connectedClients() {
        Matcher m = CONNECTED.matcher(String.valueOf(server.call("INFO", "clients")));
        assertThat(m.find()).isTrue();
        return Integer.parseInt(m.group(1)) - 1;
    }

    /** Polls until {@code value} is at most {@code target} or {@link #SETTLE} passed; the last reading. */
    private static int settle(IntSupplier value, int target) {
        long deadline = System.nanoTime() + SETTLE.toNanos();
        int v;
        while ((v = value.getAsInt()) > target && System.nanoTime() < deadline) {
            sleepMillis(50);
        }
        return v;
    }

    private static void sleepMillis(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
