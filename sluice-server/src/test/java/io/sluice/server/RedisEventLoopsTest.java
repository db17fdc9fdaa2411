package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.flush.FlushConsolidationHandler;
import org.junit.jupiter.api.Test;

/**
 * What {@link RedisEventLoops} puts in every Redis connection's pipeline, on Netty's embedded channel: flushes
 * asked for outside a read are made once, at the end of the loop's turn, not one per command.
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

    @Test
    void commandsWrittenOutsideAReadLeaveInOneFlushAtTheEndOfTheTurn() {
        EmbeddedChannel channel = new EmbeddedChannel();
        new RedisEventLoops.ConsolidatedFlushes().afterChannelInitialized(channel);
        // As Lettuce writes commands: each one written and flushed, while no read is in progress on the channel.
        // Through the pipeline: the embedded channel's own writeAndFlush would run the loop's tasks at once.
        channel.pipeline().writeAndFlush("FCALL 1");
        channel.pipeline().writeAndFlush("FCALL 2");
        channel.pipeline().writeAndFlush("FCALL 3");
        assertThat(channel.outboundMessages()).as("nothing flushed while the turn lasts").isEmpty();
        // The loop's turn ends: the one scheduled flush runs and sends the three.
        channel.runPendingTasks();
        assertThat(channel.outboundMessages()).containsExactly("FCALL 1", "FCALL 2", "FCALL 3");
        channel.finishAndReleaseAll();
    }

    @Test
    void aFullBatchIsFlushedAtOnce() {
        EmbeddedChannel channel = new EmbeddedChannel();
        new RedisEventLoops.ConsolidatedFlushes().afterChannelInitialized(channel);
        for (int i = 0; i < RedisEventLoops.MAX_COMMANDS_PER_FLUSH; i++) {
            channel.pipeline().writeAndFlush("FCALL " + i);
        }
        // The last flush of a full batch goes out at once, without waiting for the end of the turn.
        assertThat(channel.outboundMessages()).hasSize(RedisEventLoops.MAX_COMMANDS_PER_FLUSH);
        channel.finishAndReleaseAll();
    }
}
