package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.flush.FlushConsolidationHandler;
import org.junit.jupiter.api.Test;

/**
 * What {@link RedisEventLoops} puts in every Redis connection's pipeline, on Netty's embedded channel: the flush
 * consolidator, first. (The embedded channel runs its loop's tasks after every write, so the consolidation itself
 * cannot be held within one turn here; its effect on Redis's reads is measured in docs/benchmarks-by-hand.md.)
 */
class RedisEventLoopsTest {

    @Test
    void theConsolidatorComesFirstInThePipeline() {
        EmbeddedChannel channel = new EmbeddedChannel();
        channel.pipeline().addLast("encoder", new io.netty.channel.ChannelOutboundHandlerAdapter());
        new RedisEventLoops.ConsolidatedFlushes().afterChannelInitialized(channel);
        assertThat(channel.pipeline().first()).isInstanceOf(FlushConsolidationHandler.class);
        channel.finishAndReleaseAll();
    }
}
