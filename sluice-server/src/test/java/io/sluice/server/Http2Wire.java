package io.sluice.server;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http2.DefaultHttp2FrameReader;
import io.netty.handler.codec.http2.DefaultHttp2FrameWriter;
import io.netty.handler.codec.http2.Http2Exception;
import io.netty.handler.codec.http2.Http2FrameAdapter;
import io.netty.handler.codec.http2.Http2FrameWriter;
import io.netty.handler.codec.http2.Http2Headers;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;

/**
 * HTTP/2 frames as bytes, for the unit tests of what reads them: written with Netty's frame writer (HPACK
 * included) into a channel that only collects them, and read back with Netty's frame reader.
 */
final class Http2Wire {

    private Http2Wire() {
    }

    /** The bytes {@code frames} writes with a frame writer, in order. */
    static byte[] write(BiConsumer<Http2FrameWriter, ChannelHandlerContext> frames) {
        EmbeddedChannel sink = new EmbeddedChannel(new ChannelOutboundHandlerAdapter());
        ChannelHandlerContext ctx = sink.pipeline().firstContext();
        frames.accept(new DefaultHttp2FrameWriter(), ctx);
        sink.flush();
        ByteBuf all = Unpooled.buffer();
        for (Object o; (o = sink.readOutbound()) != null; ) {
            ByteBuf b = (ByteBuf) o;
            all.writeBytes(b);
            b.release();
        }
        byte[] bytes = new byte[all.readableBytes()];
        all.readBytes(bytes);
        sink.finishAndReleaseAll();
        return bytes;
    }

    /**
     * The frames a channel wrote, by kind, read as they come: one reader per channel, since header blocks depend on
     * the ones before (HPACK).
     */
    static final class Frames extends Http2FrameAdapter {
        final List<long[]> resets = new ArrayList<>();
        final List<Long> goAwayErrors = new ArrayList<>();
        final List<Integer> goAwayLastStreams = new ArrayList<>();
        int responses;
        private final DefaultHttp2FrameReader reader = new DefaultHttp2FrameReader();
        private final EmbeddedChannel context = new EmbeddedChannel(new ChannelOutboundHandlerAdapter());

        /** Reads every frame {@code channel} has written since the last call. */
        Frames readFrom(EmbeddedChannel channel) throws Http2Exception {
            ByteBuf all = Unpooled.buffer();
            for (Object o; (o = channel.readOutbound()) != null; ) {
                ByteBuf b = (ByteBuf) o;
                all.writeBytes(b);
                b.release();
            }
            try {
                while (all.isReadable()) {
                    int before = all.readerIndex();
                    reader.readFrame(context.pipeline().firstContext(), all, this);
                    if (all.readerIndex() == before) {
                        throw new AssertionError("a partial frame at the end of what the channel wrote");
                    }
                }
            } finally {
                all.release();
            }
            return this;
        }

        @Override
        public void onRstStreamRead(ChannelHandlerContext ctx, int streamId, long errorCode) {
            resets.add(new long[] {streamId, errorCode});
        }

        @Override
        public void onGoAwayRead(ChannelHandlerContext ctx, int lastStreamId, long errorCode, ByteBuf debugData) {
            goAwayErrors.add(errorCode);
            goAwayLastStreams.add(lastStreamId);
        }

        @Override
        public void onHeadersRead(ChannelHandlerContext ctx, int streamId, Http2Headers headers, int padding,
                boolean endStream) {
            responses++;
        }

        @Override
        public void onHeadersRead(ChannelHandlerContext ctx, int streamId, Http2Headers headers, int streamDependency,
                short weight, boolean exclusive, int padding, boolean endStream) {
            responses++;
        }
    }
}
