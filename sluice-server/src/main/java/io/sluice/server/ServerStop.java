package io.sluice.server;

import com.linecorp.armeria.server.Server;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/** How one Armeria server of {@link SluiceServer} is stopped without waiting for its idle acceptor thread. */
final class ServerStop {

    /** Watches servers being stopped ({@link #released}); a daemon thread, so it never keeps a JVM alive. */
    private static final ScheduledExecutorService STOP_POLLER = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "sluice-server-stop");
        t.setDaemon(true);
        return t;
    });

    private ServerStop() {}

    /**
     * Stops {@code server} and completes once it has released its port and closed its connections, without
     * waiting for its acceptor thread to end.
     *
     * <p>Why not {@code server.stop()}'s own future: it completes only when the acceptor's Netty event loop has
     * terminated, and Armeria ends that loop with {@code shutdownGracefully()}, whose quiet period is Netty's fixed
     * 2 s. With nothing left to accept, those 2 s added nothing but made an idle {@code sluice serve} take about
     * 3.5 s to exit on SIGTERM instead of the shutdown quiet period and a few milliseconds. The acceptor thread
     * still ends by itself 2 s later; a JVM exiting on a signal does not wait for it.
     */
    static CompletableFuture<Void> released(Server server) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        server.stop().whenComplete((x, e) -> done.complete(null));
        // Armeria empties activePorts() once the listening sockets are closed, after the graceful shutdown's
        // quiet period, and then closes the remaining connections; a poll sees both without reaching inside.
        ScheduledFuture<?> poll = STOP_POLLER.scheduleWithFixedDelay(() -> {
            if (server.activePorts().isEmpty() && server.numConnections() == 0) {
                done.complete(null);
            }
        }, 10, 10, TimeUnit.MILLISECONDS);
        done.whenComplete((x, e) -> poll.cancel(false));
        return done;
    }
}
