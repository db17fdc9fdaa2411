package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The server under HTTP/2 patterns that make it do unbounded work per connection, spoken frame by frame over a
 * real socket (cleartext HTTP/2 with prior knowledge, as Envoy's gRPC client does): the frames are written by
 * hand because a well-behaved client library refuses to send them.
 *
 * <p>"MadeYouReset" (CVE-2025-55163): a client sends a complete request and then a frame that is an error on
 * that stream (here a WINDOW_UPDATE with increment 0, RFC 9113 §6.9), so that the server itself resets the
 * stream, which it has usually answered already. The stream no longer counts against the concurrency limit, so
 * a client repeating this keeps the server busy without limit. The server must answer with GOAWAY
 * {@code ENHANCE_YOUR_CALM} and close the connection after a bounded number of such streams
 * ({@link HttpStack#HTTP2_MAX_RESETS_PER_WINDOW}, {@link Http2ServerResetLimit}), whether the client reads
 * everything at once and gives back flow-control window (the case that ran unbounded: 100,000 streams, no
 * GOAWAY) or leaves the server's answers unread; and a bystander on another connection must still be served.
 */
class Http2AbuseIT {

    private static final int FRAME_HEADERS = 0x1;
    private static final int FRAME_RST_STREAM = 0x3;
    private static final int FRAME_SETTINGS = 0x4;
    private static final int FRAME_GOAWAY = 0x7;
    private static final int FRAME_WINDOW_UPDATE = 0x8;
    private static final int FLAG_END_STREAM = 0x1;
    private static final int FLAG_ACK = 0x1;
    private static final int FLAG_END_HEADERS = 0x4;
    private static final int SETTINGS_MAX_CONCURRENT_STREAMS = 0x3;

    private static final int FRAME_DATA = 0x0;
    private static final int FRAME_PING = 0x6;
    private static final long ENHANCE_YOUR_CALM = 0xb;

    /**
     * The most streams the attack writes: far more than the server's limit (400 server resets per minute), so that
     * a server without the limit shows as a connection still open at the end, not as a hung test.
     */
    private static final int STREAMS_SENT_AT_MOST = 20_000;

    /**
     * The server must have closed the connection before this many streams were written: the limit is 400 resets,
     * and the writer keeps at most {@link #AHEAD} streams ahead of the server's resets, so a close comes within
     * about 1,400 streams; the margin is for what a loaded machine leaves in the socket buffers.
     */
    private static final int STREAMS_BEFORE_CLOSE_AT_MOST = 10_000;

    /** Streams written and not yet reset by the server, at most, so that what was written is what it read. */
    private static final int AHEAD = 1_000;

    /** Give back connection window once this many body bytes were read (the initial window is 65,535). */
    private static final int WINDOW_RETURN_BYTES = 16_384;

    @TempDir
    Path dir;
    TestServer t;

    @BeforeEach
    void start() {
        // The test servers' quiet period of 0 on purpose: when a response cannot be written (its stream was reset
        // by this attack) Armeria begins a graceful close of the connection, and its drain is how long that close
        // leaves the connection to the limit. The drain once followed the quiet period, so with 0 the close ended
        // the connection first, with GOAWAY NO_ERROR; it is now Armeria's whatever the quiet period
        // (OpenConnections), and this test is what shows it.
        t = TestServer.start(dir, """
                limits:
                  per_minute: {algorithm: fixed_window, limit: 1000000, window: 1m}
                rules:
                  api: {limits: [per_minute]}
                """);
    }

    @AfterEach
    void stop() {
        t.close();
    }

    @Test
    void bothPortsAdvertiseAFiniteStreamLimit() throws IOException {
        for (int port : new int[] {t.server.httpPort(), t.server.grpcPort()}) {
            try (Socket socket = connect(port)) {
                OutputStream out = socket.getOutputStream();
                writePreface(out);
                DataInputStream in = new DataInputStream(socket.getInputStream());
                Frame settings = Frame.read(in);
                assertThat(settings.type).as("the server's first frame").isEqualTo(FRAME_SETTINGS);
                assertThat(settings.setting(SETTINGS_MAX_CONCURRENT_STREAMS))
                        .as("SETTINGS_MAX_CONCURRENT_STREAMS on port %d", port)
                        .isEqualTo(HttpStack.HTTP2_MAX_CONCURRENT_STREAMS);
            }
        }
    }

    @Test
    void madeYouResetFromAClientThatReadsPromptlyDrawsGoawayWhileABystanderIsServed() throws Exception {
        attackBothPorts(true);
    }

    @Test
    void madeYouResetFromAClientThatLeavesAnswersUnreadDrawsGoawayWhileABystanderIsServed() throws Exception {
        attackBothPorts(false);
    }

    /**
     * MadeYouReset on answered streams on each port in turn, with a bystander calling {@code /v1/check} on its
     * own connection before, during and after each attack.
     */
    private void attackBothPorts(boolean readsPromptly) throws Exception {
        for (int port : new int[] {t.server.httpPort(), t.server.grpcPort()}) {
            List<Integer> bystander = new CopyOnWriteArrayList<>();
            bystander.add(bystanderCheck());
            AtomicBoolean attacking = new AtomicBoolean(true);
            Thread calls = new Thread(() -> {
                while (attacking.get()) {
                    bystander.add(bystanderCheck());
                    sleep(20);
                }
            });
            calls.start();
            Outcome outcome;
            try {
                outcome = madeYouReset(port, readsPromptly);
            } finally {
                attacking.set(false);
                calls.join();
            }
            bystander.add(bystanderCheck());
            System.out.printf("port %d, %s: %s%n", port, readsPromptly ? "prompt reader" : "slow reader", outcome);

            assertThat(outcome.goawayError).as("GOAWAY's error on port %d (%s)", port, outcome)
                    .isEqualTo(ENHANCE_YOUR_CALM);
            assertThat(outcome.closed).as("connection closed on port %d (%s)", port, outcome).isTrue();
            assertThat(outcome.streamsSent).as("streams written before the close on port %d", port)
                    .isLessThan(STREAMS_BEFORE_CLOSE_AT_MOST);
            assertThat(outcome.serverResets).as("streams the server reset on port %d before closing", port)
                    .isGreaterThanOrEqualTo(HttpStack.HTTP2_MAX_RESETS_PER_WINDOW)
                    .isLessThan(STREAMS_BEFORE_CLOSE_AT_MOST);
            assertThat(bystander).as("the bystander's answers around the attack on port %d", port)
                    .hasSizeGreaterThanOrEqualTo(3).containsOnly(200);
        }
    }

    private int bystanderCheck() {
        return t.post("/v1/check", "{\"rule\": \"api\", \"key\": \"bystander\"}").statusCode();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private record Outcome(int streamsSent, int serverResets, int responses, long goawayLastStream,
                           long goawayError, boolean closed) { }

    /**
     * Complete GET requests, each followed at once by a zero WINDOW_UPDATE on its stream, until the server sends
     * GOAWAY or closes the connection, or {@link #STREAMS_SENT_AT_MOST} streams have been sent; then up to 30 s
     * for the close. A client that reads promptly reads every frame as it comes, acknowledges SETTINGS and PINGs
     * and gives back the connection's flow-control window, so the server is never held up by it; the other only
     * acknowledges SETTINGS, so the server's answers queue up once the window is spent.
     */
    private static Outcome madeYouReset(int port, boolean readsPromptly) throws Exception {
        try (Socket socket = connect(port)) {
            OutputStream out = socket.getOutputStream();
            writePreface(out);
            DataInputStream in = new DataInputStream(socket.getInputStream());
            AtomicInteger resets = new AtomicInteger();
            // What the reader has to send back, written by the writer between streams: the reader never writes,
            // so it never waits behind a write that the server's own backed-up answers hold up (it would stop
            // reading them, and the server, its answers unread, would stop reading too).
            Queue<byte[]> replies = new ConcurrentLinkedQueue<>();
            AtomicInteger responses = new AtomicInteger();
            long[] goaway = {-1, -1};
            boolean[] closed = {false};
            Thread reader = new Thread(() -> {
                int unreturnedWindow = 0;
                try {
                    while (true) {
                        Frame f = Frame.read(in);
                        if (f.type == FRAME_RST_STREAM) {
                            resets.incrementAndGet();
                        } else if (f.type == FRAME_HEADERS) {
                            responses.incrementAndGet();
                        } else if (f.type == FRAME_GOAWAY) {
                            synchronized (goaway) {
                                // keep the last GOAWAY, but an error once one came
                                if (goaway[1] <= 0) {
                                    goaway[0] = f.word(0) & 0x7fffffffL;
                                    goaway[1] = f.word(4);
                                }
                            }
                        } else if (f.type == FRAME_SETTINGS && (f.flags & FLAG_ACK) == 0) {
                            replies.add(frame(FRAME_SETTINGS, FLAG_ACK, 0, new byte[0]));
                        } else if (readsPromptly && f.type == FRAME_PING && (f.flags & FLAG_ACK) == 0) {
                            replies.add(frame(FRAME_PING, FLAG_ACK, 0, f.payload));
                        } else if (readsPromptly && f.type == FRAME_DATA) {
                            unreturnedWindow += f.payload.length;
                            if (unreturnedWindow >= WINDOW_RETURN_BYTES) {
                                replies.add(frame(FRAME_WINDOW_UPDATE, 0, 0, int32(unreturnedWindow)));
                                unreturnedWindow = 0;
                            }
                        }
                    }
                } catch (EOFException | SocketException e) {
                    synchronized (closed) {
                        closed[0] = true;
                    }
                } catch (IOException e) {
                    // a read timeout: neither GOAWAY nor close came
                }
            });
            reader.setDaemon(true);
            reader.start();
            byte[] headers = getHealthHeaders(port);
            int sent = 0;
            try {
                for (int stream = 1; sent < STREAMS_SENT_AT_MOST; stream += 2) {
                    while (sent - resets.get() > AHEAD && reader.isAlive()) {
                        writeReplies(out, replies);
                        Thread.sleep(1);
                    }
                    writeReplies(out, replies);
                    writeFrame(out, FRAME_HEADERS, FLAG_END_STREAM | FLAG_END_HEADERS, stream, headers);
                    writeFrame(out, FRAME_WINDOW_UPDATE, 0, stream, int32(0));
                    sent++;
                    synchronized (goaway) {
                        // a GOAWAY(2^31-1, NO_ERROR) only begins a graceful close: streams go on until the next
                        if (goaway[0] >= 0 && (goaway[1] != 0 || goaway[0] != Integer.MAX_VALUE)) {
                            break;
                        }
                    }
                    if (!reader.isAlive()) {
                        break;
                    }
                }
                out.flush();
            } catch (SocketException e) {
                // the server closed the connection while we were still writing
            }
            reader.join(30_000);
            synchronized (goaway) {
                synchronized (closed) {
                    return new Outcome(sent, resets.get(), responses.get(), goaway[0], goaway[1], closed[0]);
                }
            }
        }
    }

    private static byte[] int32(int value) {
        return new byte[] {(byte) (value >>> 24), (byte) (value >>> 16), (byte) (value >>> 8), (byte) value};
    }

    private static Socket connect(int port) throws IOException {
        Socket socket = new Socket();
        socket.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
        socket.setSoTimeout(30_000);
        return socket;
    }

    private static void writePreface(OutputStream out) throws IOException {
        out.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        writeFrame(out, FRAME_SETTINGS, 0, 0, new byte[0]);
        out.flush();
    }

    /**
     * {@code GET /health} in HPACK without the dynamic table: indexed :method GET (2) and :scheme http (6), then
     * literal values for :path (4) and :authority (1), each "literal without indexing, indexed name".
     */
    private static byte[] getHealthHeaders(int port) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.write(0x82);
        b.write(0x86);
        literal(b, 4, "/health");
        literal(b, 1, "127.0.0.1:" + port);
        return b.toByteArray();
    }

    private static void literal(ByteArrayOutputStream b, int nameIndex, String value) {
        byte[] v = value.getBytes(StandardCharsets.US_ASCII);
        b.write(nameIndex); // 0000 + 4-bit index: literal header field without indexing
        b.write(v.length); // no Huffman, length < 127
        b.write(v, 0, v.length);
    }

    /** One frame's bytes, for the reader to hand to the writer. */
    private static byte[] frame(int type, int flags, int stream, byte[] payload) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        try {
            writeFrame(b, type, flags, stream, payload);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return b.toByteArray();
    }

    /** Writes the frames the reader queued (acknowledgements, window given back), in the order it queued them. */
    private static void writeReplies(OutputStream out, Queue<byte[]> replies) throws IOException {
        for (byte[] reply; (reply = replies.poll()) != null; ) {
            out.write(reply);
        }
    }

    private static void writeFrame(OutputStream out, int type, int flags, int stream, byte[] payload)
            throws IOException {
        int n = payload.length;
        out.write(new byte[] {(byte) (n >>> 16), (byte) (n >>> 8), (byte) n, (byte) type, (byte) flags,
                (byte) (stream >>> 24), (byte) (stream >>> 16), (byte) (stream >>> 8), (byte) stream});
        out.write(payload);
    }

    /** One HTTP/2 frame as read off the wire. */
    private record Frame(int type, int flags, int stream, byte[] payload) {

        static Frame read(DataInputStream in) throws IOException {
            int length = (in.readUnsignedByte() << 16) | (in.readUnsignedByte() << 8) | in.readUnsignedByte();
            int type = in.readUnsignedByte();
            int flags = in.readUnsignedByte();
            int stream = in.readInt() & 0x7fffffff;
            byte[] payload = new byte[length];
            in.readFully(payload);
            return new Frame(type, flags, stream, payload);
        }

        /** The 32-bit unsigned word at {@code offset} in the payload. */
        long word(int offset) {
            return ((payload[offset] & 0xffL) << 24) | ((payload[offset + 1] & 0xffL) << 16)
                    | ((payload[offset + 2] & 0xffL) << 8) | (payload[offset + 3] & 0xffL);
        }

        /** A SETTINGS parameter's value, or -1 when the frame leaves it out (unlimited, for this one). */
        long setting(int id) {
            for (int i = 0; i + 6 <= payload.length; i += 6) {
                int key = ((payload[i] & 0xff) << 8) | (payload[i + 1] & 0xff);
                if (key == id) {
                    return ((payload[i + 2] & 0xffL) << 24) | ((payload[i + 3] & 0xffL) << 16)
                            | ((payload[i + 4] & 0xffL) << 8) | (payload[i + 5] & 0xffL);
                }
            }
            return -1;
        }
    }
}
