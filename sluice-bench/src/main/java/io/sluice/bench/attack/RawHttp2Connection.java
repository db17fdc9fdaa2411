package io.sluice.bench.attack;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.http2.DefaultHttp2FrameReader;
import io.netty.handler.codec.http2.DefaultHttp2FrameWriter;
import io.netty.handler.codec.http2.Http2CodecUtil;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2FrameAdapter;
import io.netty.handler.codec.http2.Http2Flags;
import io.netty.handler.codec.http2.Http2FrameTypes;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2Settings;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One cleartext HTTP/2 connection (prior knowledge, as Envoy's gRPC client speaks) on which the caller writes
 * frames that a well-behaved client library refuses to send. It uses Netty's HTTP/2 frame writer and reader
 * (the frame layer, HPACK included) without Netty's connection handler, which would enforce the protocol on
 * our side. What it reads is only counted: the server's resets, response headers, GOAWAY and the close. It
 * acknowledges the server's SETTINGS and gives back the connection's flow-control window for the bodies it
 * reads and answers its PINGs, so that the server is never held up by this client.
 *
 * <p>Not thread-safe for writing: {@link #write} runs the caller's frames on the connection's event loop.
 */
final class RawHttp2Connection implements AutoCloseable {
    /** Give back connection window once this many body bytes were read (the default window is 65,535). */
    private static final int WINDOW_RETURN_BYTES = 16_384;

    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final DefaultHttp2FrameWriter writer = new DefaultHttp2FrameWriter();
    private final AtomicInteger serverResets = new AtomicInteger();
    private final AtomicInteger responses = new AtomicInteger();
    private final CountDownLatch goaway = new CountDownLatch(1);
    private final CountDownLatch closed = new CountDownLatch(1);
    private volatile long goawayError = -1;
    private volatile int goawayLastStream = -1;
    private volatile String goawayDebug = "";
    private volatile long goawayAtNanos;
    private volatile long closedAtNanos;
    private volatile Throwable failure;
    private ChannelHandlerContext ctx;
    private Channel channel;

    /** Connects and writes the client preface and an empty SETTINGS frame. */
    static RawHttp2Connection open(String host, int port) throws InterruptedException {
        RawHttp2Connection connection = new RawHttp2Connection();
        connection.connect(host, port);
        return connection;
    }

    private void connect(String host, int port) throws InterruptedException {
        Reader reader = new Reader();
        channel = new Bootstrap().group(group).channel(NioSocketChannel.class)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 10_000).option(ChannelOption.TCP_NODELAY, true)
                .handler(reader).connect(host, port).sync().channel();
        channel.closeFuture().addListener(f -> {
            closedAtNanos = System.nanoTime();
            closed.countDown();
        });
        channel.eventLoop().submit(() -> {
            ctx = channel.pipeline().context(reader);
            ctx.write(Unpooled.wrappedBuffer(Http2CodecUtil.connectionPrefaceBuf()));
            writer.writeSettings(ctx, new Http2Settings(), ctx.newPromise());
            ctx.flush();
        }).sync();
    }

    /** The frames one attack stream is made of, written on the event loop with {@link Frames}. */
    interface StreamFrames {
        void write(Frames frames, int streamId);
    }

    /** Frame writing for {@link StreamFrames}; valid only inside {@link #write}. */
    final class Frames {
        void headers(int streamId, Http2Headers headers, boolean endStream) {
            writer.writeHeaders(ctx, streamId, headers, 0, endStream, ctx.voidPromise());
        }

        void data(int streamId, byte[] body, boolean endStream) {
            writer.writeData(ctx, streamId, Unpooled.wrappedBuffer(body), 0, endStream, ctx.voidPromise());
        }

        void rstStream(int streamId, Http2Error error) {
            writer.writeRstStream(ctx, streamId, error.code(), ctx.voidPromise());
        }

        /**
         * A WINDOW_UPDATE with any increment, 0 included (a stream error, RFC 9113 §6.9), written as a raw frame
         * so that no check on this side refuses it.
         */
        void windowUpdate(int streamId, int increment) {
            writer.writeFrame(ctx, Http2FrameTypes.WINDOW_UPDATE, streamId, new Http2Flags(),
                    Unpooled.buffer(4).writeInt(increment), ctx.voidPromise());
        }
    }

    /**
     * Writes {@code streams} new streams of {@code frames} from stream id {@code firstStreamId} on, and flushes;
     * waits until the connection can take more (Netty's write buffer below its high-water mark), so that the
     * attacker is paced by the socket and not by this process's memory.
     *
     * @return false once the connection is closed
     */
    boolean write(int firstStreamId, int streams, StreamFrames frames) throws InterruptedException {
        if (!channel.isActive()) {
            return false;
        }
        Frames writerFrames = new Frames();
        try {
            channel.eventLoop().submit(() -> {
                for (int i = 0; i < streams; i++) {
                    frames.write(writerFrames, firstStreamId + 2 * i);
                }
                ctx.flush();
            }).sync();
        } catch (Exception e) {
            return channel.isActive(); // a write on a connection the server just closed
        }
        while (channel.isActive() && !channel.isWritable()) {
            Thread.sleep(1);
        }
        return channel.isActive();
    }

    /** RST_STREAM frames the server sent, on any stream. */
    int serverResets() {
        return serverResets.get();
    }

    /** Response HEADERS frames the server sent (each answered stream has one, its trailers another). */
    int responses() {
        return responses.get();
    }

    boolean goawayReceived() {
        return goaway.getCount() == 0;
    }

    /**
     * Whether a GOAWAY came that ends the connection's streams: one with an error, or with a last stream id
     * below 2^31-1 (a graceful close announces 2^31-1 first, and streams go on until the second).
     */
    boolean finalGoawayReceived() {
        return goawayReceived() && (goawayError != Http2Error.NO_ERROR.code() || goawayLastStream != Integer.MAX_VALUE);
    }

    /**
     * The GOAWAY's error code by name, e.g. {@code ENHANCE_YOUR_CALM} (the first that is not {@code NO_ERROR}, if
     * a graceful GOAWAY came first), or null before one came.
     */
    String goawayError() {
        if (!goawayReceived()) {
            return null;
        }
        Http2Error error = Http2Error.valueOf(goawayError);
        return error == null ? "code " + goawayError : error.name();
    }

    /**
     * The last stream id the server said it processed, from its last GOAWAY, or -1 (a server shutting down
     * gracefully first sends 2^31-1, then the real one).
     */
    int goawayLastStream() {
        return goawayLastStream;
    }

    /** That GOAWAY's debug data (Netty puts the reason there), or empty. */
    String goawayDebug() {
        return goawayDebug;
    }

    /** When the first GOAWAY came ({@link System#nanoTime()}), or 0. */
    long goawayAtNanos() {
        return goawayAtNanos;
    }

    /** What made this side close the connection (a reset by the server, a frame it could not read), or null. */
    Throwable failure() {
        return failure;
    }

    /** Waits up to {@code millis} for the server to close the connection. */
    boolean awaitClose(long millis) throws InterruptedException {
        return closed.await(millis, TimeUnit.MILLISECONDS);
    }

    boolean closed() {
        return closed.getCount() == 0;
    }

    /** When the connection closed ({@link System#nanoTime()}), or 0 while open. */
    long closedAtNanos() {
        return closedAtNanos;
    }

    @Override
    public void close() throws InterruptedException {
        if (channel != null) {
            channel.close().await(5, TimeUnit.SECONDS);
        }
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    }

    /** Reads the server's frames off the socket (cumulated by {@link ByteToMessageDecoder}) and counts them. */
    private final class Reader extends ByteToMessageDecoder {
        private final DefaultHttp2FrameReader frames = new DefaultHttp2FrameReader();
        private int unreturnedWindow;

        private final Http2FrameAdapter listener = new Http2FrameAdapter() {
            @Override
            public void onRstStreamRead(ChannelHandlerContext c, int streamId, long errorCode) {
                serverResets.incrementAndGet();
            }

            @Override
            public void onHeadersRead(ChannelHandlerContext c, int streamId, Http2Headers headers, int padding,
                    boolean endStream) {
                responses.incrementAndGet();
            }

            @Override
            public void onHeadersRead(ChannelHandlerContext c, int streamId, Http2Headers headers, int streamDependency,
                    short weight, boolean exclusive, int padding, boolean endStream) {
                responses.incrementAndGet();
            }

            @Override
            public int onDataRead(ChannelHandlerContext c, int streamId, ByteBuf data, int padding, boolean endOfStream) {
                int consumed = data.readableBytes() + padding;
                unreturnedWindow += consumed;
                if (unreturnedWindow >= WINDOW_RETURN_BYTES) {
                    writer.writeWindowUpdate(c, 0, unreturnedWindow, c.voidPromise());
                    c.flush();
                    unreturnedWindow = 0;
                }
                return consumed;
            }

            @Override
            public void onSettingsRead(ChannelHandlerContext c, Http2Settings settings) {
                writer.writeSettingsAck(c, c.voidPromise());
                c.flush();
            }

            @Override
            public void onGoAwayRead(ChannelHandlerContext c, int lastStreamId, long errorCode, ByteBuf debugData) {
                // A graceful close sends GOAWAY(2^31-1, NO_ERROR) and a PING, then the real GOAWAY once the PING
                // is acknowledged: keep the last stream id of the last one, and the first error that is one.
                goawayLastStream = lastStreamId;
                if (goaway.getCount() > 0 || (goawayError == Http2Error.NO_ERROR.code() && errorCode != goawayError)) {
                    goawayError = errorCode;
                    goawayDebug = debugData.toString(StandardCharsets.UTF_8);
                }
                if (goaway.getCount() > 0) {
                    goawayAtNanos = System.nanoTime();
                    goaway.countDown();
                }
            }

            @Override
            public void onPingRead(ChannelHandlerContext c, long data) {
                writer.writePing(c, true, data, c.voidPromise());
                c.flush();
            }
        };

        @Override
        protected void decode(ChannelHandlerContext c, ByteBuf in, List<Object> out) throws Exception {
            frames.readFrame(c, in, listener);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext c, Throwable cause) {
            if (failure == null) {
                failure = cause;
            }
            c.close(); // a reset by the server, or a frame we cannot read: either way the attack is over
        }
    }
}
