package io.sluice.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A loopback TCP proxy between a Redis client and redis-server that can misbehave on cue, to reproduce what a
 * network failure does to a client: lose a reply after the command ran, swallow commands, cut connections.
 * Each accepted connection gets its own upstream connection and two pump threads.
 */
public final class TcpProxy implements AutoCloseable {

    private final int targetPort;
    private final ServerSocket server;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final AtomicBoolean blackhole = new AtomicBoolean();
    private final AtomicBoolean dropNextReply = new AtomicBoolean();
    private final AtomicBoolean replyDue = new AtomicBoolean();
    private final AtomicInteger connections = new AtomicInteger();
    private final AtomicInteger forwardedChunks = new AtomicInteger();
    private final List<String> forwarded = new CopyOnWriteArrayList<>();
    private volatile String marker = "EVALSHA";
    private volatile Runnable whileReplyLost = () -> { };
    private volatile boolean closed;

    public TcpProxy(int targetPort) throws IOException {
        this.targetPort = targetPort;
        this.server = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"));
        Thread acceptor = new Thread(this::acceptLoop, "tcp-proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    public String uri() {
        return "redis://127.0.0.1:" + server.getLocalPort();
    }

    /**
     * The next client chunk containing {@code marker} is forwarded and runs in Redis, but its reply never
     * reaches the client: the proxy cuts both connections instead.
     */
    public void dropReplyAfter(String marker) {
        dropReplyAfter(marker, () -> { });
    }

    /**
     * As {@link #dropReplyAfter(String)}, and runs {@code meanwhile} after the command ran in Redis and before the
     * proxy cuts the connections: whatever it does happens before the client can notice and re-send.
     */
    public void dropReplyAfter(String marker, Runnable meanwhile) {
        this.marker = marker;
        this.whileReplyLost = meanwhile;
        dropNextReply.set(true);
    }

    /** While on, bytes from the client are read and discarded: commands never reach Redis. */
    public void blackhole(boolean on) {
        blackhole.set(on);
    }

    /** Cuts every open connection, as a network failure would; the client may reconnect. */
    public void dropConnections() {
        for (Socket s : sockets) {
            closeQuietly(s);
        }
        sockets.clear();
    }

    /** Connections accepted so far (a reconnect adds one). */
    public int connections() {
        return connections.get();
    }

    /** Client chunks forwarded to Redis so far. */
    public int forwardedChunks() {
        return forwardedChunks.get();
    }

    /** Whether any forwarded client chunk contained {@code text}. */
    public boolean forwardedAny(String text) {
        return forwarded.stream().anyMatch(c -> c.contains(text));
    }

    public void resetCounters() {
        forwardedChunks.set(0);
        forwarded.clear();
    }

    @Override
    public void close() {
        closed = true;
        closeQuietly(server);
        dropConnections();
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket client = server.accept();
                Socket upstream = new Socket();
                upstream.connect(new InetSocketAddress("127.0.0.1", targetPort), 2_000);
                client.setTcpNoDelay(true);
                upstream.setTcpNoDelay(true);
                sockets.add(client);
                sockets.add(upstream);
                connections.incrementAndGet();
                start(() -> pumpRequests(client, upstream));
                start(() -> pumpReplies(upstream, client));
            } catch (IOException e) {
                if (!closed) {
                    closeQuietly(server);
                }
                return;
            }
        }
    }

    private void pumpRequests(Socket client, Socket upstream) {
        byte[] buf = new byte[64 * 1024];
        try (InputStream in = client.getInputStream(); OutputStream out = upstream.getOutputStream()) {
            int n;
            while ((n = in.read(buf)) >= 0) {
                if (blackhole.get()) {
                    continue;
                }
                String chunk = new String(buf, 0, n, StandardCharsets.ISO_8859_1);
                // Arm before forwarding: Redis may answer before this thread runs another line.
                if (dropNextReply.get() && chunk.contains(marker)) {
                    dropNextReply.set(false);
                    replyDue.set(true);
                }
                out.write(buf, 0, n);
                out.flush();
                forwardedChunks.incrementAndGet();
                forwarded.add(chunk);
            }
        } catch (IOException e) {
            // connection cut: the other pump notices too
        } finally {
            closeQuietly(client);
            closeQuietly(upstream);
        }
    }

    private void pumpReplies(Socket upstream, Socket client) {
        byte[] buf = new byte[64 * 1024];
        try (InputStream in = upstream.getInputStream(); OutputStream out = client.getOutputStream()) {
            int n;
            while ((n = in.read(buf)) >= 0) {
                if (replyDue.compareAndSet(true, false)) {
                    // The command ran in Redis; its reply is lost with the connection.
                    whileReplyLost.run();
                    closeQuietly(client);
                    closeQuietly(upstream);
                    return;
                }
                out.write(buf, 0, n);
                out.flush();
            }
        } catch (IOException e) {
            // connection cut
        } finally {
            closeQuietly(client);
            closeQuietly(upstream);
        }
    }

    private static void start(Runnable pump) {
        Thread t = new Thread(pump, "tcp-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    private static void closeQuietly(java.io.Closeable c) {
        try {
            c.close();
        } catch (IOException ignored) {
            // already closed
        }
    }
}
