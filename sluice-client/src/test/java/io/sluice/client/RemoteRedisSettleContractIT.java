package io.sluice.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.FixedWindow;
import io.sluice.Limit;
import io.sluice.RateLimiter;
import io.sluice.SlidingLog;
import io.sluice.Store;
import io.sluice.Ticket;
import io.sluice.testkit.ManualClock;
import io.sluice.testkit.SettleContract;
import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.SharedRedis;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Estimated charges and settlements through the remote store, against a real {@code sluice serve} process
 * deciding in a real redis-server (exact mode, client time on the contract's manual clock): the contract as the
 * Redis store passes it in process ({@code RedisSettleContractIT}), so sliding_log, which that store cannot
 * settle yet, is refused by name through the server too.
 */
@ExtendWith(SharedRedis.class)
class RemoteRedisSettleContractIT extends SettleContract {

    private static ServeProcess server;

    @BeforeAll
    static void startServer() {
        server = ServeProcess.start("--store", RedisServer.shared().uri(), "--clock", "client");
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    @Override
    protected Store newStore(ManualClock clock) {
        return RemoteStore.builder().uri(server.uri()).clock(clock).timeout(Duration.ofSeconds(30)).build();
    }

    /** The contract's algorithms less sliding_log, which the server's Redis store refuses (last test). */
    static Stream<Limit> settleableInRedis() {
        return SettleContract.settleable().filter(l -> !(l instanceof SlidingLog));
    }

    @Override
    @ParameterizedTest
    @MethodSource("settleableInRedis")
    protected void aRefundGivesBackTheUnusedPartOfTheEstimate(Limit limit) {
        super.aRefundGivesBackTheUnusedPartOfTheEstimate(limit);
    }

    @Override
    @ParameterizedTest
    @MethodSource("settleableInRedis")
    protected void anExtraChargeIsTakenEvenPastTheLimit(Limit limit) {
        super.anExtraChargeIsTakenEvenPastTheLimit(limit);
    }

    @Override
    @ParameterizedTest
    @MethodSource("settleableInRedis")
    protected void aTicketSettlesOnce(Limit limit) {
        super.aTicketSettlesOnce(limit);
    }

    /** The contract's rule of two limits with a fixed window in place of its sliding log. */
    @Override
    @Test
    protected void aTicketCoversEveryLimitOfTheRule() {
        RateLimiter limiter = limiter(FixedWindow.of(10, Duration.ofMinutes(1)).named("per_minute"),
                FixedWindow.of(20, Duration.ofHours(1)).named("per_hour"));
        Ticket ticket = limiter.tryCharge("k", 10).ticket();
        limiter.settle(ticket, 2);
        assertThat(limiter.tryAcquire("k", 8).allowed()).isTrue();
        clock.advance(Duration.ofMinutes(1));
        assertThat(limiter.tryAcquire("k", 10).allowed()).as("the hour counts 2 + 8 + 10").isTrue();
        assertThat(limiter.peek("k", 1).limit()).isEqualTo("per_hour");
    }

    @Test
    void slidingLogIsRefusedByNameThroughTheServer() {
        RateLimiter log = limiter(SlidingLog.of(10, Duration.ofMinutes(1)).named("log"));
        assertThatThrownBy(() -> log.tryCharge("k", 1)).isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("limit 'log'").hasMessageContaining("sliding_log");
        assertThat(log.peek("k", 0).remaining()).as("nothing charged").isEqualTo(10);
    }
}
