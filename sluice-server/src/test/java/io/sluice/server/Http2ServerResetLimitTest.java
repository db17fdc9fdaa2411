package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http2.DefaultHttp2Connection;
import io.netty.handler.codec.http2.DefaultHttp2ConnectionDecoder;
import io.netty.handler.codec.http2.DefaultHttp2ConnectionEncoder;
import io.netty.handler.codec.http2.DefaultHttp2FrameReader;
import io.netty.handler.codec.http2.DefaultHttp2FrameWriter;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.Http2CodecUtil;
import io.netty.handler.codec.http2.Http2Connection;
import io.netty.handler.codec.http2.Http2ConnectionHandler;
import io.netty.handler.codec.http2.Http2ConnectionHandlerBuilder;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2Flags;
import io.netty.handler.codec.http2.Http2FrameAdapter;
import io.netty.handler.codec.http2.Http2FrameTypes;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2Settings;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The limit in front of a real Netty HTTP/2 server handler, built from its codec as Armeria builds its own (so
 * without Netty's own limit on the resets a server sends), on an embedded channel with a clock the test moves.
 * The client's frames are bytes written by Netty's frame writer; the server's are read back with its frame reader.
 */
class Http2ServerResetLimitTest {

    private static final int MAX = 10;
    private static final int WINDOW_SECONDS = 60;
    private static final Http2Headers GET = new DefaultHttp2Headers().method("GET").scheme("http").path("/health")
            .authority("localhost");

    private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
    private final Http2Wire.Frames frames = new Http2Wire.Frames();
    private EmbeddedChannel server;
    private int nextStream = 1;

    @AfterEach
    void release() {
        if (server != null) {
            server.finishAndReleaseAll();
        }
    }

    /**
     * A server whose handler answers each request at once ({@code 200}, END_STREAM) or, with {@code cancel}, resets
     * it with CANCEL instead, behind the limit.
     */
    private void start(boolean cancel) throws Exception {
        Http2Connection connection = new DefaultHttp2Connection(true);
        DefaultHttp2ConnectionEncoder encoder = new DefaultHttp2ConnectionEncoder(connection,
                new DefaultHttp2FrameWriter());
        DefaultHttp2ConnectionDecoder decoder = new DefaultHttp2ConnectionDecoder(connection, encoder,
                new DefaultHttp2FrameReader());
        Http2ConnectionHandler[] handler = new Http2ConnectionHandler[1];
        decoder.frameListener(new Http2FrameAdapter() {
            @Override
            public void onHeadersRead(ChannelHandlerContext ctx, int streamId, Http2Headers headers,
                    int streamDependency, short weight, boolean exclusive, int padding, boolean endStream) {
                if (cancel) {
                    handler[0].resetStream(ctx, streamId, Http2Error.CANCEL.code(), ctx.newPromise());
                } else {
                    encoder.writeHeaders(ctx, streamId, new DefaultHttp2Headers().status("200"), 0, true,
                            ctx.newPromise());
                }
            }
        });
        handler[0] = new Http2ConnectionHandlerBuilder().codec(decoder, encoder).build();
        server = new EmbeddedChannel(new Http2ServerResetLimit(MAX, WINDOW_SECONDS, nanos::get), handler[0]);
        server.writeInbound(Unpooled.wrappedBuffer(Http2CodecUtil.connectionPrefaceBuf()),
                Unpooled.wrappedBuffer(Http2Wire.write((w, ctx) -> w.writeSettings(ctx, new Http2Settings(),
                        ctx.newPromise()))));
        frames.readFrom(server);
    }

    /**
     * {@code streams} MadeYouReset streams on answered streams: a complete GET, which the server answers (the
     * stream is then closed and forgotten), then a WINDOW_UPDATE of 0 on the stream, a stream error that the
     * server answers with RST_STREAM(PROTOCOL_ERROR) for a stream it no longer knows.
     */
    private void madeYouReset(int streams) throws Exception {
        for (int i = 0; i < streams; i++) {
            int stream = nextStream;
            nextStream += 2;
            server.writeInbound(Unpooled.wrappedBuffer(Http2Wire.write((w, ctx) ->
                    w.writeHeaders(ctx, stream, GET, 0, true, ctx.newPromise()))));
            server.writeInbound(Unpooled.wrappedBuffer(Http2Wire.write((w, ctx) ->
                    w.writeFrame(ctx, Http2FrameTypes.WINDOW_UPDATE, stream, new Http2Flags(),
                            Unpooled.buffer(4).writeInt(0), ctx.newPromise()))));
        }
        frames.readFrom(server);
    }

    @Test
    void answeredStreamsResetPastTheLimitDrawGoawayEnhanceYourCalmAndTheClose() throws Exception {
        start(false);
        madeYouReset(MAX);
        assertThat(frames.responses).isEqualTo(MAX);
        assertThat(frames.resets).hasSize(MAX)
                .allSatisfy(r -> assertThat(r[1]).isEqualTo(Http2Error.PROTOCOL_ERROR.code()));
        assertThat(frames.goAwayErrors).isEmpty();
        assertThat(server.isOpen()).isTrue();

        madeYouReset(1);
        assertThat(frames.resets).hasSize(MAX + 1);
        assertThat(frames.goAwayErrors).containsExactly(Http2Error.ENHANCE_YOUR_CALM.code());
        assertThat(server.isOpen()).isFalse();
    }

    /**
     * A graceful close that already named the last stream (Armeria begins one when a response cannot be written,
     * and with a connection drain of 0 it sends the final GOAWAY at once) does not hide the reason: the client
     * still gets ENHANCE_YOUR_CALM, with the same last stream, and the close.
     */
    @Test
    void aGracefulCloseThatAlreadyNamedTheLastStreamStillDrawsEnhanceYourCalm() throws Exception {
        start(false);
        madeYouReset(3);
        Http2ConnectionHandler handler = server.pipeline().get(Http2ConnectionHandler.class);
        ChannelHandlerContext ctx = server.pipeline().context(handler);
        handler.goAway(ctx, 5, Http2Error.NO_ERROR.code(), Unpooled.EMPTY_BUFFER, ctx.newPromise());
        ctx.flush();
        frames.readFrom(server);
        assertThat(frames.goAwayErrors).containsExactly(Http2Error.NO_ERROR.code());
        assertThat(server.isOpen()).isTrue();

        // A stream past the one named is refused and its WINDOW_UPDATE reset as well: two resets each.
        for (int i = 0; i < MAX && server.isOpen(); i++) {
            madeYouReset(1);
        }
        assertThat(frames.resets).hasSize(MAX + 1);
        assertThat(frames.goAwayErrors).containsExactly(Http2Error.NO_ERROR.code(),
                Http2Error.ENHANCE_YOUR_CALM.code());
        assertThat(frames.goAwayLastStreams).containsExactly(5, 5);
        assertThat(server.isOpen()).isFalse();
    }

    @Test
    void theCountStartsAgainInEachWindow() throws Exception {
        start(false);
        for (int window = 0; window < 5; window++) {
            madeYouReset(MAX);
            nanos.addAndGet(TimeUnit.SECONDS.toNanos(WINDOW_SECONDS));
        }
        assertThat(frames.resets).hasSize(5 * MAX);
        assertThat(frames.goAwayErrors).isEmpty();
        assertThat(server.isOpen()).isTrue();

        madeYouReset(MAX + 1);
        assertThat(frames.goAwayErrors).containsExactly(Http2Error.ENHANCE_YOUR_CALM.code());
    }

    @Test
    void theServersOwnCancelsAreNotCounted() throws Exception {
        start(true);
        for (int i = 0; i < 3 * MAX; i++) {
            int stream = nextStream;
            nextStream += 2;
            server.writeInbound(Unpooled.wrappedBuffer(Http2Wire.write((w, ctx) ->
                    w.writeHeaders(ctx, stream, GET, 0, true, ctx.newPromise()))));
        }
        frames.readFrom(server);
        assertThat(frames.resets).hasSize(3 * MAX)
                .allSatisfy(r -> assertThat(r[1]).isEqualTo(Http2Error.CANCEL.code()));
        assertThat(frames.goAwayErrors).isEmpty();
        assertThat(server.isOpen()).isTrue();
    }

    @Test
    void withoutAnHttp2HandlerTheBytesAreNotRead() {
        // HTTP/1.1 bytes that look like a server preface and a flood of resets: on a connection without an HTTP/2
        // handler they are a response body, and the limit must not count them.
        byte[] lookalike = Http2Wire.write((w, ctx) -> {
            w.writeSettings(ctx, new Http2Settings(), ctx.newPromise());
            for (int i = 0; i < 3 * MAX; i++) {
                w.writeRstStream(ctx, 1 + 2 * i, Http2Error.PROTOCOL_ERROR.code(), ctx.newPromise());
            }
        });
        server = new EmbeddedChannel(new Http2ServerResetLimit(MAX, WINDOW_SECONDS, nanos::get));
        server.writeOutbound(Unpooled.copiedBuffer("HTTP/1.1 200 OK\r\ncontent-length: 400\r\n\r\n",
                StandardCharsets.US_ASCII));
        server.writeOutbound(Unpooled.wrappedBuffer(lookalike));
        assertThat(server.isOpen()).isTrue();
        ByteBuf first = server.readOutbound();
        assertThat(first.toString(StandardCharsets.US_ASCII)).startsWith("HTTP/1.1 200 OK");
        first.release();
    }

    @Test
    void refusesALimitThatIsNotPositive() {
        org.assertj.core.api.Assertions.assertThatIllegalArgumentException()
                .isThrownBy(() -> new Http2ServerResetLimit(0, 60, System::nanoTime))
                .withMessageContaining("maxResets and windowSeconds: 0, 60 (expected: both > 0)");
    }
}
