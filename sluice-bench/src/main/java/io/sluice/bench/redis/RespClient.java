package io.sluice.bench.redis;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A minimal blocking RESP2 client for the harness's own commands (INFO, FLUSHALL, MEMORY USAGE, SCAN, MONITOR):
 * kept apart from the clients under test so its traffic is easy to tell apart and never shares their
 * connections. Replies: simple and bulk strings as String, integers as Long, arrays as List, nil as null;
 * an error reply throws.
 */
public final class RespClient implements AutoCloseable {

    /** An error reply from Redis. */
    public static final class RedisError extends RuntimeException {
        RedisError(String message) {
            super(message);
        }
    }

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;

    private RespClient(Socket socket) throws IOException {
        this.socket = socket;
        this.in = new BufferedInputStream(socket.getInputStream(), 1 << 16);
        this.out = new BufferedOutputStream(socket.getOutputStream(), 1 << 16);
    }

    /** Connects to {@code host:port}; reads time out after {@code timeoutMillis} (0: never). */
    public static RespClient connect(String host, int port, int timeoutMillis) {
        Socket socket = new Socket();
        try {
            socket.connect(new InetSocketAddress(host, port), 5_000);
            socket.setSoTimeout(timeoutMillis);
            socket.setTcpNoDelay(true);
            return new RespClient(socket);
        } catch (IOException e) {
            try {
                socket.close();
            } catch (IOException ignored) {
                // the connect failure is what matters
            }
            throw new UncheckedIOException("cannot connect to Redis at " + host + ":" + port, e);
        }
    }

    /** Sends one command and returns its reply. */
    public Object call(String... args) {
        send(args);
        return read();
    }

    /** Sends one command without reading the reply (pipelining, MONITOR). */
    public void send(String... args) {
        try {
            out.write(('*' + Integer.toString(args.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
            for (String arg : args) {
                byte[] bytes = arg.getBytes(StandardCharsets.UTF_8);
                out.write(('$' + Integer.toString(bytes.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
                out.write(bytes);
                out.write('\r');
                out.write('\n');
            }
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write to Redis", e);
        }
    }

    /** Reads one reply. */
    public Object read() {
        try {
            int type = in.read();
            String line = readLine();
            switch (type) {
                case '+':
                    return line;
                case '-':
                    throw new RedisError(line);
                case ':':
                    return Long.parseLong(line);
                case '$': {
                    int length = Integer.parseInt(line);
                    if (length < 0) {
                        return null;
                    }
                    byte[] bytes = in.readNBytes(length + 2);
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
                case -1:
                    throw new UncheckedIOException(new IOException("Redis closed the connection"));
                default:
                    throw new IllegalStateException("not a RESP2 reply type: " + (char) type);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read from Redis", e);
        }
    }

    private String readLine() throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream(64);
        int b;
        while ((b = in.read()) != '\r') {
            if (b < 0) {
                throw new IOException("Redis closed the connection mid-reply");
            }
            line.write(b);
        }
        in.read(); // '\n'
        return line.toString(StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing: nothing left to do with it
        }
    }
}
