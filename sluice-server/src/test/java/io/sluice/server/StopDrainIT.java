package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a stop says to an HTTP/2 client still connected (a raw socket, so every frame is seen): with a quiet period
 * shorter than Armeria's connection drain the stop cuts the drain as the port closes ({@link OpenConnections}), so
 * the first GOAWAY is already the closing one, naming the last stream the server took (with the full drain it would
 * name the largest stream id, which only announces the close); with the default quiet period (1 s) the drain
 * stays. A connection closed
 * while the server runs keeps the full drain whatever the quiet period (Http2AbuseIT, at the test servers' 0).
 */
class StopDrainIT {

    private static final String RULES = """
            limits:
              per_minute: {algorithm: fixed_window, limit: 100, window: 1m}
            rules:
              api: {limits: [per_minute]}
            """;
    private static final int FRAME_SETTINGS = 0x4;
    private static final int FRAME_GOAWAY = 0x7;
    private static final long LARGEST_STREAM_ID = Integer.MAX_VALUE;

    @TempDir
    Path dir;

    @Test
    void aStopWithAShortQuietPeriodSendsTheClosingGoawayFirst() throws Exception {
        List<Long> lastStreams = goawaysAtStop(b -> { });
        assertThat(lastStreams).as("GOAWAY last-stream ids at a stop with quiet period 0").isNotEmpty()
                .first().isNotEqualTo(LARGEST_STREAM_ID);
        assertThat(lastStreams).doesNotContain(LARGEST_STREAM_ID);
    }

    @Test
    void aStopWithTheDefaultQuietPeriodKeepsArmeriasDrain() throws Exception {
        List<Long> lastStreams = goawaysAtStop(b -> b.shutdown(Duration.ofSeconds(1), Duration.ofSeconds(10)));
        assertThat(lastStreams).as("GOAWAY last-stream ids at a stop with the default quiet period")
                .hasSizeGreaterThanOrEqualTo(2).first().isEqualTo(LARGEST_STREAM_ID);
        assertThat(lastStreams.get(lastStreams.size() - 1)).isNotEqualTo(LARGEST_STREAM_ID);
    }

    /** Connects to the gRPC port, stops the server, and returns the last-stream id of every GOAWAY until the close. */
    private List<Long> goawaysAtStop(java.util.function.Consumer<SluiceServer.Builder> settings) throws Exception {
        TestServer t = TestServer.start(dir, List.of(RULES), settings);
        CompletableFuture<Void> stopped = null;
        List<Long> lastStreams = new ArrayList<>();
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", t.server.grpcPort()), 10_000);
            socket.setSoTimeout(30_000);
            OutputStream out = socket.getOutputStream();
            out.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            writeFrame(out, FRAME_SETTINGS, 0, new byte[0]);
            out.flush();
            DataInputStream in = new DataInputStream(socket.getInputStream());
            assertThat(readFrame(in, lastStreams)).as("the server's first frame").isEqualTo(FRAME_SETTINGS);
            stopped = t.server.stopAsync();
            try {
                while (true) {
                    int type = readFrame(in, lastStreams);
                    if (type == FRAME_SETTINGS) {
                        writeFrame(out, FRAME_SETTINGS, 0x1, new byte[0]); // the acknowledgement
                        out.flush();
                    }
                }
            } catch (EOFException | SocketException closed) {
                // the server closed the connection: every GOAWAY it sent was read
            }
        } finally {
            (stopped == null ? t.server.stopAsync() : stopped).join();
        }
        return lastStreams;
    }

    /** Reads one frame, noting a GOAWAY's last-stream id; returns its type. */
    private static int readFrame(DataInputStream in, List<Long> lastStreams) throws IOException {
        int length = (in.readUnsignedByte() << 16) | (in.readUnsignedByte() << 8) | in.readUnsignedByte();
        int type = in.readUnsignedByte();
        in.readUnsignedByte(); // flags
        in.readInt(); // stream
        byte[] payload = new byte[length];
        in.readFully(payload);
        if (type == FRAME_GOAWAY) {
            lastStreams.add(((payload[0] & 0x7fL) << 24) | ((payload[1] & 0xffL) << 16)
                    | ((payload[2] & 0xffL) << 8) | (payload[3] & 0xffL));
        }
        return type;
    }

    private static void writeFrame(OutputStream out, int type, int flags, byte[] payload) throws IOException {
        int n = payload.length;
        out.write(new byte[] {(byte) (n >>> 16), (byte) (n >>> 8), (byte) n, (byte) type, (byte) flags, 0, 0, 0, 0});
        out.write(payload);
    }
}
