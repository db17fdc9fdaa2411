package io.sluice.server;

import com.linecorp.armeria.internal.common.InitiateConnectionShutdown;
import io.netty.channel.Channel;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.concurrent.ImmediateEventExecutor;
import java.time.Duration;

/**
 * The client connections a server holds, so that a stop can give them a shorter drain than Armeria's.
 *
 * <p>Armeria drains every connection it closes gracefully for one fixed duration (a first GOAWAY, the closing one
 * when the drain ends), both when the server stops and while it runs: it closes a connection gracefully when a
 * response could not be written because the client reset the stream, which is what a MadeYouReset flood provokes.
 * The running case needs the full drain: cut to nothing, the connection's closing GOAWAY ({@code NO_ERROR}) went
 * out before the reset limit's {@code ENHANCE_YOUR_CALM} (Http2ServerResetLimit), and hid it (Http2AbuseIT,
 * AttackProbesIT). So the server keeps Armeria's drain, and a stop with a quiet period shorter than that drain
 * asks each open connection, as Armeria's own {@code ServiceRequestContext.initiateConnectionShutdown(Duration)}
 * does, to finish its drain within the quiet period ({@code 0s}: at once).
 */
final class OpenConnections {

    private final ChannelGroup channels = new DefaultChannelGroup("sluice-client-connections",
            ImmediateEventExecutor.INSTANCE);

    /** Tracks the connection whose pipeline this is, until it closes (a child pipeline customizer). */
    void track(ChannelPipeline pipeline) {
        channels.add(pipeline.channel());
    }

    /**
     * Asks every open connection to end its drain within {@code drain}: those not closing yet start a graceful
     * close with that drain, and a longer drain already under way is cut to it. Streams in flight still finish.
     */
    void drainWithin(Duration drain) {
        InitiateConnectionShutdown event = InitiateConnectionShutdown.of(drain.toNanos() / 1_000);
        for (Channel channel : channels) {
            channel.pipeline().fireUserEventTriggered(event);
        }
    }

    /** How many connections are open; for tests. */
    int size() {
        return channels.size();
    }
}
