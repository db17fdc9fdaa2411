package io.sluice.server;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http2.Http2Connection;
import io.netty.handler.codec.http2.Http2ConnectionHandler;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.ssl.AbstractSniHandler;
import io.netty.handler.ssl.SslHandler;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Closes an HTTP/2 connection on which the server has to reset too many streams: "MadeYouReset"
 * (CVE-2025-55163), where a client sends frames that are stream errors (a WINDOW_UPDATE of 0, DATA on a closed
 * stream, ...) so that the server resets streams it has answered or is working on, and so can make it do work
 * without end while never resetting a stream itself. Counted are the RST_STREAM frames the server writes with an
 * error code other than NO_ERROR and CANCEL (those two are the server's own choice, e.g. a response that ended
 * before its request); past {@code maxResets} of them within {@code windowSeconds} the connection is ended with
 * GOAWAY {@code ENHANCE_YOUR_CALM} and the close, and one warning is logged.
 *
 * <p>Why here: Netty has the same limit (its {@code Http2MaxRstFrameLimitEncoder}), but installs it only when it
 * builds the connection's codec itself, and Armeria builds its own (through Armeria 1.41), so Armeria's servers
 * run without it; Armeria limits only the client's own resets ({@code http2MaxResetFramesPerWindow}). This
 * handler reads the frames the server writes, between the TLS handler (if any) and Armeria's HTTP/2 handler, so
 * it sees every reset whatever path wrote it, resets of streams the server no longer knows included.
 *
 * <p>It starts reading at the server's connection preface, the SETTINGS frame the HTTP/2 handler writes first
 * (RFC 9113 §3.4), once such a handler is in the pipeline; until then (HTTP/1.1, or before the protocol is
 * known) it only passes writes on. Not thread-safe: one per connection, on its event loop.
 */
final class Http2ServerResetLimit extends ChannelOutboundHandlerAdapter implements Http2ResetScanner.Listener {

    static final String NAME = "sluice-http2-reset-limit";

    private static final Logger LOG = LoggerFactory.getLogger(Http2ServerResetLimit.class);

    private static final int FRAME_HEADER = 9;
    private static final int TYPE_SETTINGS = 0x4;

    private final int maxResets;
    private final long windowNanos;
    private final LongSupplier nanoTime;

    /** Null until the server's preface was seen, and again once this connection can no longer be read. */
    private Http2ResetScanner scanner;
    private boolean stopped;
    private ChannelHandlerContext http2;
    private long windowStart;
    private int resetsInWindow;
    private boolean exceeded;

    Http2ServerResetLimit(int maxResets, int windowSeconds, LongSupplier nanoTime) {
        if (maxResets <= 0 || windowSeconds <= 0) {
            throw new IllegalArgumentException("maxResets and windowSeconds: " + maxResets + ", " + windowSeconds
                    + " (expected: both > 0)");
        }
        this.maxResets = maxResets;
        this.windowNanos = TimeUnit.SECONDS.toNanos(windowSeconds);
        this.nanoTime = nanoTime;
        this.windowStart = nanoTime.getAsLong();
    }

    /**
     * Adds a limit to a new connection's pipeline, as Armeria's child-channel customizer (which runs after Armeria
     * laid out the pipeline, before the protocol is known): right after the TLS handler, so that it reads the
     * frames in clear, or first when the port is cleartext.
     */
    static void install(ChannelPipeline pipeline, int maxResets, int windowSeconds) {
        Http2ServerResetLimit limit = new Http2ServerResetLimit(maxResets, windowSeconds, System::nanoTime);
        ChannelHandlerContext tls = pipeline.context(AbstractSniHandler.class);
        if (tls == null) {
            tls = pipeline.context(SslHandler.class);
        }
        if (tls == null) {
            pipeline.addFirst(NAME, limit);
        } else {
            pipeline.addAfter(tls.name(), NAME, limit);
        }
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
        if (!stopped) {
            if (!(msg instanceof ByteBuf bytes)) {
                // Not bytes (no HTTP/2 server here writes anything else): frame boundaries would be lost, and a
                // guess could close a good connection, so the limit steps aside.
                stop();
            } else {
                if (scanner == null && isSettingsFrame(bytes)) {
                    start(ctx);
                }
                if (scanner != null) {
                    scanner.scan(bytes);
                }
            }
        }
        ctx.write(msg, promise);
        if (exceeded && !stopped) {
            stop();
            goAway(ctx);
        }
    }

    @Override
    public void onRstStream(int streamId, long errorCode) {
        if (errorCode == Http2Error.NO_ERROR.code() || errorCode == Http2Error.CANCEL.code()) {
            return;
        }
        long now = nanoTime.getAsLong();
        if (now - windowStart >= windowNanos) {
            windowStart = now;
            resetsInWindow = 1;
        } else if (++resetsInWindow > maxResets) {
            exceeded = true;
        }
    }

    private static boolean isSettingsFrame(ByteBuf bytes) {
        int i = bytes.readerIndex();
        return bytes.readableBytes() >= FRAME_HEADER && bytes.getByte(i + 3) == TYPE_SETTINGS
                && bytes.getInt(i + 5) == 0;
    }

    /**
     * Reads from here on when an HTTP/2 handler is in the pipeline behind this one and no TLS handler sits between
     * them (else the bytes here would not be the frames in clear).
     */
    private void start(ChannelHandlerContext ctx) {
        ChannelPipeline pipeline = ctx.pipeline();
        ChannelHandlerContext handler = pipeline.context(Http2ConnectionHandler.class);
        if (handler == null) {
            return; // HTTP/1.1 bytes that happen to look like a SETTINGS frame's header
        }
        List<String> names = pipeline.names();
        int self = names.indexOf(ctx.name());
        int tls = names.indexOf(tlsName(pipeline));
        if (names.indexOf(handler.name()) < self || tls > self) {
            stop();
            return;
        }
        http2 = handler;
        scanner = new Http2ResetScanner(this);
    }

    private static String tlsName(ChannelPipeline pipeline) {
        ChannelHandlerContext tls = pipeline.context(SslHandler.class);
        return tls == null ? null : tls.name();
    }

    private void stop() {
        stopped = true;
        scanner = null;
    }

    /**
     * Ends the connection: a GOAWAY {@code ENHANCE_YOUR_CALM} naming the last stream the server took, then the
     * close, flushed first so that a client that reads gets the GOAWAY, and at once so that one that does not read
     * cannot hold the connection open. The last stream is the real one, not the 2^31-1 that a connection error's
     * GOAWAY carries in Netty.
     *
     * <p>When a graceful close began earlier, a GOAWAY already went out: Armeria begins one when a response cannot
     * be written (a stream this attack had reset), first with 2^31-1 and, after the connection drain, with the
     * real last stream. Netty sends no second GOAWAY naming the same last stream, so in that case the frame is
     * written here, with the last stream the peer was already given (RFC 9113 §6.8: a later GOAWAY may not name a
     * higher one), so that the client still learns why the connection ends.
     */
    private void goAway(ChannelHandlerContext ctx) {
        Http2ConnectionHandler handler = (Http2ConnectionHandler) http2.handler();
        Http2Connection connection = handler.connection();
        int lastStream = connection.remote().lastStreamCreated();
        String why = "too many streams reset by the server: over " + maxResets + " within "
                + TimeUnit.NANOSECONDS.toSeconds(windowNanos) + " seconds";
        long code = Http2Error.ENHANCE_YOUR_CALM.code();
        ByteBuf debugData = ByteBufUtil.writeAscii(ctx.alloc(), why);
        if (connection.goAwaySent()) {
            lastStream = Math.min(lastStream, connection.remote().lastStreamKnownByPeer());
            handler.encoder().frameWriter().writeGoAway(http2, lastStream, code, debugData, http2.newPromise());
        } else {
            handler.goAway(http2, lastStream, code, debugData, http2.newPromise());
        }
        LOG.atWarn().addKeyValue("event", "http2_reset_limit").addKeyValue("remote", ctx.channel().remoteAddress())
                .addKeyValue("last_stream", lastStream).log("closing an HTTP/2 connection: {}", why);
        ctx.flush();
        ctx.close();
    }
}
