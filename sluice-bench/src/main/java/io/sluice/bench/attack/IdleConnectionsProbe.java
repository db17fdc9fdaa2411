package io.sluice.bench.attack;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;

/**
 * Many connections that never send a byte, held for a while: each costs the server a file descriptor at least
 * until its idle timeout closes it. Counts how many the server had closed by the end and how many it still held.
 */
final class IdleConnectionsProbe implements Probe {
    private final int connections;
    private final int seconds;

    IdleConnectionsProbe(int connections, int seconds) {
        this.connections = connections;
        this.seconds = seconds;
    }

    @Override
    public String name() {
        return "idle_connections";
    }

    @Override
    public String describe() {
        return String.format("%,d TCP connections to the HTTP port that send nothing, held %d s", connections, seconds);
    }

    @Override
    public Outcome run(Target target) throws Exception {
        Answers answers = new Answers();
        List<Socket> sockets = new ArrayList<>();
        try {
            for (int i = 0; i < connections; i++) {
                Socket socket = new Socket();
                try {
                    socket.connect(new InetSocketAddress(target.host(), target.httpPort()), 5_000);
                    sockets.add(socket);
                } catch (IOException e) {
                    answers.add("connect failed");
                    socket.close();
                }
            }
            Thread.sleep(seconds * 1_000L);
            for (Socket socket : sockets) {
                answers.add(state(socket));
            }
        } finally {
            for (Socket socket : sockets) {
                socket.close();
            }
        }
        return new Outcome(answers, null);
    }

    /** Whether the server closed the connection, without waiting for it: a short read tells. */
    static String state(Socket socket) {
        try {
            // A server's FIN or answer on loopback is already there: 1 ms tells, without waiting 50 ms per socket.
            socket.setSoTimeout(1);
            int read = socket.getInputStream().read();
            return read < 0 ? "closed by server" : "answered";
        } catch (SocketTimeoutException e) {
            return "still open";
        } catch (IOException e) {
            return "reset by server";
        }
    }
}
