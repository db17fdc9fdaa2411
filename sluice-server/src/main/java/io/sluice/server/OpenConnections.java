package io.sluice.server;

import com.linecorp.armeria.internal.common.InitiateConnectionShutdown;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.concurrent.ImmediateEventExecutor;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;

/**
 * The client connections a server holds, so that a stop can close them sooner than Armeria does.
 *
 * <p>Armeria drains every HTTP/2 connection it closes gracefully for one fixed duration (a first GOAWAY, the
 * closing one when the drain ends), both when the server stops and while it runs: it closes a connection
 * gracefully when a response could not be written because the client reset the stream, which is what a
 * MadeYouReset flood provokes. The running case needs the full drain: cut to nothing, the connection's closing
 * GOAWAY ({@code NO_ERROR}) went out before the reset limit's {@code ENHANCE_YOUR_CALM} (Http2ServerResetLimit),
 * and hid it (Http2AbuseIT, AttackProbesIT). So the server keeps Armeria's drain, and a stop whose quiet period is
 * shorter than the drain shortens it for the connections of each port as the port closes (after the quiet
 * period, with no request in flight or past the shutdown timeout, when Armeria closes them itself): it asks each,
 * as Armeria's own {@code ServiceRequestContext.initiateConnectionShutdown(Duration)} does, to end its drain
 * within the quiet period ({@code 0s}: at once), and closes it, which also spares an HTTP/1.1 connection the
 * second Armeria keeps it open for the client to close first.
 */
final class OpenConnections {

    private final ChannelGroup channels = new DefaultChannelGroup("sluice-client-connections",
            ImmediateEventExecutor.INSTANCE);

    /** Tracks the connection whose pipeline this is, until it closes (a child pipeline customizer). */
    void track(ChannelPipeline pipeline) {
        channels.add(pipeline.channel());
    }

    /**
     * Once each listening port closes, closes its connections with a drain of {@code drain} (call before the
     * stop, so that this runs before Armeria's own close of them). Streams in flight still finish.
     */
    void closeWithDrainOnceThePortCloses(Duration drain) {
        InitiateConnectionShutdown event = InitiateConnectionShutdown.of(drain.toNanos() / 1_000);
        Set<Channel> ports = new HashSet<>();
        for (Channel channel : channels) {
            if (channel.parent() != null) {
                ports.add(channel.parent());
            }
        }
        for (Channel port : ports) {
            port.closeFuture().addListener((ChannelFutureListener) closed -> {
                for (Channel channel : channels) {
                    if (channel.parent() == port) {
                        channel.pipeline().fireUserEventTriggered(event);
                        channel.close();
                    }
                }
            });
        }
    }
}
