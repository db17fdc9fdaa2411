package io.sluice.server;

import com.linecorp.armeria.common.CommonPools;
import com.linecorp.armeria.common.util.TransportType;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.EventLoopGroupProvider;
import io.lettuce.core.resource.NettyCustomizer;
import io.lettuce.core.resource.Transports;
import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.netty.util.concurrent.EventExecutorGroup;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.ImmediateEventExecutor;
import io.sluice.redis.internal.StoreSettings;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The Lettuce client resources of the Redis store {@code sluice serve} opens: its connections run on Armeria's
 * event loops, and the commands queued on a connection between two turns of its loop leave in one write.
 *
 * <p><b>Why.</b> With a store of its own, Lettuce ran its connection on event loops of its own: every check
 * crossed from the Armeria loop that read the request to Lettuce's loop (a queued task, and a wake-up when that
 * loop slept), then back from Lettuce's loop to the Armeria loop that writes the answer. On a machine with few
 * cores those extra threads also take turns on the same cores as the event loops, Redis and the clients. On
 * Armeria's loops, a check that arrives on the connection's own loop crosses no thread at all, and the loops
 * that do cross are ones that are running anyway.
 *
 * <p>Each command Lettuce writes asks for a flush, and each flush is a {@code write} system call on the Redis
 * socket (and a {@code read} on Redis's side). Under load many checks reach the connection within one turn of
 * its loop; Netty's {@link FlushConsolidationHandler} turns their flushes into one, made at the end of the turn
 * (after at most {@value #MAX_COMMANDS_PER_FLUSH} commands): Redis then reads the commands in one call and
 * answers them in one write, as it does for a client that pipelines. A command alone is flushed at the end of
 * the same turn, so waiting adds no measurable latency.
 *
 * <p>When Armeria's loops use another transport than Lettuce would (say io_uring against epoll), Lettuce keeps
 * loops of its own and only the flushes are consolidated. The store's reconnect delay is what a store of its own
 * resources would use ({@link StoreSettings#reconnectDelay}). {@link #close()} releases what these resources
 * created (Lettuce's timer and computation threads), never Armeria's loops.
 */
final class RedisEventLoops implements AutoCloseable {

    /** Flushes left pending at most before one is made regardless (Netty's default). */
    static final int MAX_COMMANDS_PER_FLUSH = FlushConsolidationHandler.DEFAULT_EXPLICIT_FLUSH_AFTER_FLUSHES;

    private final ClientResources resources;
    private final boolean sharesArmeriaLoops;

    private RedisEventLoops(ClientResources resources, boolean sharesArmeriaLoops) {
        this.resources = resources;
        this.sharesArmeriaLoops = sharesArmeriaLoops;
    }

    /** Resources for a store whose circuit breaker pauses for {@code breakerPause}. */
    static RedisEventLoops create(Duration breakerPause) {
        EventLoopGroup armeria = CommonPools.workerGroup();
        boolean share = compatible(armeria);
        DefaultClientResources.Builder builder = DefaultClientResources.builder()
                .reconnectDelay(StoreSettings.reconnectDelay(breakerPause))
                .nettyCustomizer(new ConsolidatedFlushes());
        if (share) {
            builder.eventLoopGroupProvider(new SharedLoops(armeria));
        }
        return new RedisEventLoops(builder.build(), share);
    }

    /** Whether Lettuce's socket channels can be registered on {@code group}'s loops. */
    private static boolean compatible(EventLoopGroup group) {
        try {
            return Transports.socketChannelClass().equals(TransportType.socketChannelType(group));
        } catch (IllegalStateException e) {
            return false;
        }
    }

    /** The resources to give the store. */
    ClientResources resources() {
        return resources;
    }

    /** Whether the store's connections run on Armeria's event loops (else on Lettuce's own). */
    boolean sharesArmeriaLoops() {
        return sharesArmeriaLoops;
    }

    /** Shuts down Lettuce's own threads of these resources (after the store is closed), waiting at most 3 s. */
    @Override
    public void close() {
        resources.shutdown(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(3_000);
    }

    /** Puts a flush consolidator first in every Redis connection's pipeline (reconnections included). */
    static final class ConsolidatedFlushes implements NettyCustomizer {
        @Override
        public void afterChannelInitialized(Channel channel) {
            // First in the pipeline, next to the socket, as Netty advises: every flush from above passes through
            // it. Consolidating also when no read is in progress is what matters here: commands are written from
            // other loops' tasks, not while this connection reads.
            channel.pipeline().addFirst(new FlushConsolidationHandler(MAX_COMMANDS_PER_FLUSH, true));
        }
    }

    /** Armeria's worker loops lent to Lettuce: allocated as they are, never shut down by Lettuce. */
    private static final class SharedLoops implements EventLoopGroupProvider {
        private final EventLoopGroup group;

        SharedLoops(EventLoopGroup group) {
            this.group = group;
        }

        @Override
        @SuppressWarnings("unchecked")
        public <T extends EventLoopGroup> T allocate(Class<T> type) {
            // Lettuce asks by the class of the group it would create (EpollEventLoopGroup, say) but only uses it as
            // an EventLoopGroup for its bootstrap; compatible() checked that its channels fit these loops.
            return (T) group;
        }

        @Override
        public int threadPoolSize() {
            int n = 0;
            for (var ignored : group) {
                n++;
            }
            return n;
        }

        @Override
        public Future<Boolean> release(EventExecutorGroup eventLoopGroup, long quietPeriod, long timeout,
                                       TimeUnit unit) {
            return ImmediateEventExecutor.INSTANCE.newSucceededFuture(true);
        }

        @Override
        public Future<Boolean> shutdown(long quietPeriod, long timeout, TimeUnit timeUnit) {
            return ImmediateEventExecutor.INSTANCE.newSucceededFuture(true);
        }
    }
}
