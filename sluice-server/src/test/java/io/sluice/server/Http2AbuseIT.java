package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
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
 * stream. The stream no longer counts against the concurrency limit, yet the server has already started the
 * request, so a client repeating this keeps the server busy without limit. The server must answer with GOAWAY
 * and close the connection after a bounded number of such streams, and a bystander on another connection must
 * still be served.
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

    /**
     * Far more streams than any reset limit should allow. The server has closed after 2,608 to 20,911 resets,
     * depending on how fast this client reads (docs/dependencies.md: the close is likely Netty's queued-control-
     * frame limit, not a reset count), so the bound is generous; the test pins that a close comes at all.
     */
    private static final int STREAMS_SENT_AT_MOST = 100_000;

    /**
     * The server must close a MadeYouReset connection before it has reset every stream sent. Measured on a loaded
     * two-core machine: between 2,600 and 11,000 resets, so the close is not a fixed reset count; which of Netty's
     * limits closes it (the reset-rate limit or the queued-control-frame limit) is not pinned down here.
     */
    private static final int SERVER_RESETS_AT_MOST = STREAMS_SENT_AT_MOST - 1;

    @TempDir
    Path dir;
    TestServer t;

    @BeforeEach
    void start() {
        t = TestServer.start(dir, """
                limits:
                  per_minute: {algorithm: fixed_window, limit: 100, window: 1m}
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
    void madeYouResetIsAnsweredWithGoawayWhileABystanderIsServed() throws Exception {
        for (int port : new int[] {t.server.httpPort(), t.server.grpcPort()}) {
            Outcome outcome = madeYouReset(port);
            assertThat(outcome.goawayLastStream).as("GOAWAY on port %d", port).isNotNegative();
            System.out.printf("port %d: GOAWAY (error %d) after stream %d, %d server resets%n", port,
                    outcome.goawayError, outcome.goawayLastStream, outcome.serverResets);
            assertThat(outcome.closed).as("connection closed on port %d", port).isTrue();
            assertThat(outcome.serverResets).as("streams the server reset on port %d before closing", port)
                    .isPositive().isLessThanOrEqualTo(SERVER_RESETS_AT_MOST);
        }
        HttpResponse<String> bystander = t.post("/v1/check", "{\"rule\": \"api\", \"key\": \"bystander\"}");
        assertThat(bystander.statusCode()).isEqualTo(200);
        assertThat(bystander.body()).contains("\"allowed\":true");
    }

    private record Outcome(int serverResets, long goawayLastStream, long goawayError, boolean closed) { }

    /**
     * Complete GET requests, each followed at once by a zero WINDOW_UPDATE on its stream, until the server sends
     * GOAWAY or closes the connection, or {@link #STREAMS_SENT_AT_MOST} streams have been sent.
     */
    private static Outcome madeYouReset(int port) throws Exception {
        try (Socket socket = connect(port)) {
            OutputStream out = socket.getOutputStream();
            writePreface(out);
            DataInputStream in = new DataInputStream(socket.getInputStream());
            AtomicInteger resets = new AtomicInteger();
            long[] goaway = {-1, -1};
            boolean[] closed = {false};
            Thread reader = new Thread(() -> {
                try {
                    while (true) {
                        Frame f = Frame.read(in);
                        if (f.type == FRAME_RST_STREAM) {
                            resets.incrementAndGet();
                        } else if (f.type == FRAME_GOAWAY) {
                            synchronized (goaway) {
                                if (goaway[0] < 0) { // the first GOAWAY says where the server stopped
                                    goaway[0] = f.word(0) & 0x7fffffffL;
                                    goaway[1] = f.word(4);
                                }
                            }
                        } else if (f.type == FRAME_SETTINGS && (f.flags & FLAG_ACK) == 0) {
                            synchronized (out) {
                                writeFrame(out, FRAME_SETTINGS, FLAG_ACK, 0, new byte[0]);
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
                    synchronized (out) {
                        writeFrame(out, FRAME_HEADERS, FLAG_END_STREAM | FLAG_END_HEADERS, stream, headers);
                        writeFrame(out, FRAME_WINDOW_UPDATE, 0, stream, new byte[] {0, 0, 0, 0});
                    }
                    sent++;
                    synchronized (goaway) {
                        if (goaway[0] >= 0) {
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
                return new Outcome(resets.get(), goaway[0], goaway[1], closed[0]);
            }
        }
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
