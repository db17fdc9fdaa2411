package io.sluice.testkit.redis;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A minimal RESP2 client over a plain socket, so the test servers need no Redis client library: enough to
 * PING, SHUTDOWN, read CLUSTER INFO and inspect keys from tests, and the benchmarks' INFO, MEMORY USAGE and
 * MONITOR. Replies map to {@link String} (simple and bulk
 * strings; {@code null} for a nil bulk), {@link Long} (integers) and {@link List} (arrays); an error reply
 * throws {@link RespError}. Not thread-safe: one connection per thread.
 */
public final class RespConnection implements AutoCloseable {

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;

    private RespConnection(Socket socket) throws IOException {
        this.socket = socket;
        this.in = new BufferedInputStream(socket.getInputStream());
        this.out = socket.getOutputStream();
    }

    /**
     * Connects to {@code host:port}; every read waits at most {@code timeout}.
     *
     * @throws UncheckedIOException when the server cannot be reached
     */
    public static RespConnection open(String host, int port, Duration timeout) {
        Socket socket = new Socket();
        try {
            socket.connect(new InetSocketAddress(host, port), (int) timeout.toMillis());
            socket.setSoTimeout((int) timeout.toMillis());
            socket.setTcpNoDelay(true);
            return new RespConnection(socket);
        } catch (IOException e) {
            closeQuietly(socket);
            throw new UncheckedIOException("cannot connect to redis at " + host + ":" + port, e);
        }
    }

    /** Sends one command and reads its reply. */
    public Object call(String... args) {
        try {
            out.write(encode(args));
            out.flush();
            return read();
        } catch (IOException e) {
            throw new UncheckedIOException("redis command " + args[0] + " failed", e);
        }
    }

    /**
     * Reads the next reply: after {@link #send} (pipelining), or the next line of MONITOR.
     *
     * @throws RespError for an error reply
     */
    public Object readReply() {
        try {
            return read();
        } catch (IOException e) {
            throw new UncheckedIOException("reading a redis reply failed", e);
        }
    }

    /** Sends one command without reading a reply (SHUTDOWN answers by closing the connection). */
    public void send(String... args) {
        try {
            out.write(encode(args));
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException("redis command " + args[0] + " failed", e);
        }
    }

    /** A command as a RESP array of bulk strings. */
    static byte[] encode(String... args) {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        writeAscii(buf, "*" + args.length + "\r\n");
        for (String arg : args) {
            byte[] bytes = arg.getBytes(StandardCharsets.UTF_8);
            writeAscii(buf, "$" + bytes.length + "\r\n");
            buf.writeBytes(bytes);
            writeAscii(buf, "\r\n");
        }
        return buf.toByteArray();
    }

    private static void writeAscii(ByteArrayOutputStream buf, String s) {
        buf.writeBytes(s.getBytes(StandardCharsets.US_ASCII));
    }

    private Object read() throws IOException {
        int type = in.read();
        if (type < 0) {
            throw new EOFException("redis closed the connection");
        }
        String line = readLine();
        switch (type) {
            case '+':
                return line;
            case '-':
                throw new RespError(line);
            case ':':
                return Long.parseLong(line);
            case '$': {
                int length = Integer.parseInt(line);
                if (length < 0) {
                    return null;
                }
                byte[] bytes = in.readNBytes(length + 2);
                if (bytes.length < length + 2) {
                    throw new EOFException("redis closed the connection mid-reply");
                }
                return new String(bytes, 0, length, StandardCharsets.UTF_8);
            }
            case '*': {
                int count = Integer.parseInt(line);
                if (count < 0) {
                    return null;
                }
                List<Object> items = new ArrayList<>(count);
                for (int i = 0; i < count; i++) {
                    items.add(read());
                }
                return items;
            }
            default:
                throw new IOException("unexpected RESP type byte '" + (char) type + "'");
        }
    }

    private String readLine() throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        for (;;) {
            int b = in.read();
            if (b < 0) {
                throw new EOFException("redis closed the connection mid-line");
            }
            if (b == '\r') {
                in.read(); // '\n'
                return line.toString(StandardCharsets.UTF_8);
            }
            line.write(b);
        }
    }

    @Override
    public void close() {
        closeQuietly(socket);
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing: nothing left to do
        }
    }

    /** An error reply from Redis, e.g. {@code NOSCRIPT No matching script}. */
    public static final class RespError extends RuntimeException {
        public RespError(String message) {
            super(message);
        }
    }
}
