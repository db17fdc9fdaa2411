package io.sluice.server;

import com.linecorp.armeria.common.Flags;
import com.linecorp.armeria.common.SessionProtocol;
import com.linecorp.armeria.server.GracefulShutdown;
import com.linecorp.armeria.server.Server;
import com.linecorp.armeria.server.ServerBuilder;
import io.netty.handler.ssl.ClientAuth;
import java.io.File;
import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * The Armeria server every port of {@code sluice serve} is built on: address, TLS and mutual TLS, HTTP/2
 * limits, graceful shutdown and JSON errors. One place, so that the HTTP port, the gRPC port and the bench's
 * empty endpoint ({@link EmptyEndpoint}, the ceiling the server is measured against) run the same stack.
 */
final class HttpStack {

    /**
     * SETTINGS_MAX_CONCURRENT_STREAMS on every HTTP/2 connection: the value Envoy's guidance for edge proxies
     * recommends, far above what one Envoy or client keeps in flight per connection for rate-limit calls, and
     * small enough that one connection cannot pin an unbounded number of requests.
     */
    static final int HTTP2_MAX_CONCURRENT_STREAMS = 100;
    /**
     * Resets per HTTP/2 connection within {@link #HTTP2_RESET_WINDOW_SECONDS}, counted apart for the client's own
     * RST_STREAMs and for the error resets it provokes the server into: Armeria's default for the first (400 a
     * minute), used for both. A well-behaved client provokes no error resets at all.
     */
    static final int HTTP2_MAX_RESETS_PER_WINDOW = 400;
    static final int HTTP2_RESET_WINDOW_SECONDS = 60;

    private HttpStack() {}

    /** A server builder listening on {@code port} of the settings' address, with every shared setting applied. */
    static ServerBuilder base(Settings settings, int port, int maxRequestLength, OpenConnections connections) {
        ServerBuilder sb = Server.builder();
        InetSocketAddress address = new InetSocketAddress(settings.bind(), port);
        if (settings.tls()) {
            sb.port(address, SessionProtocol.HTTPS);
            sb.tls(settings.tlsCert().toFile(), settings.tlsKey().toFile());
            if (settings.tlsClientCa() != null) {
                // Mutual TLS: the handshake itself fails for a client without a certificate from the CA, so no
                // request of such a client reaches a service (HTTP and gRPC alike).
                File ca = settings.tlsClientCa().toFile();
                sb.tlsCustomizer(ssl -> ssl.trustManager(ca).clientAuth(ClientAuth.REQUIRE));
            }
        } else {
            sb.port(address, SessionProtocol.HTTP);
        }
        // The gRPC server keeps Armeria's default registry: two servers on one registry would register the
        // shared executors' gauges twice. Sluice's own gRPC metrics are recorded by the service either way.
        return sb.maxRequestLength(maxRequestLength)
                // HTTP/2 abuse (CVE-2023-44487 "Rapid Reset", CVE-2025-55163 "MadeYouReset"): a finite stream
                // count per connection, advertised in SETTINGS, instead of Armeria's unlimited default; and one
                // bound on resets per connection, whoever sends them: the client's RST_STREAMs (Armeria's limit,
                // pinned here rather than left to a system property) and the ones a client provokes the server
                // into sending (Http2ServerResetLimit: Armeria's pipeline has no such limit). Either flood is
                // answered with GOAWAY ENHANCE_YOUR_CALM and the close (Http2AbuseIT).
                .http2MaxStreamsPerConnection(HTTP2_MAX_CONCURRENT_STREAMS)
                .http2MaxResetFramesPerWindow(HTTP2_MAX_RESETS_PER_WINDOW, HTTP2_RESET_WINDOW_SECONDS)
                .childChannelPipelineCustomizer(pipeline -> Http2ServerResetLimit.install(pipeline,
                        HTTP2_MAX_RESETS_PER_WINDOW, HTTP2_RESET_WINDOW_SECONDS))
                .disableServerHeader()
                // Expected failures (a body over the limit) are answered, not errors worth a periodic warning.
                .unloggedExceptionsReportInterval(Duration.ZERO)
                .gracefulShutdown(GracefulShutdown.builder()
                        .quietPeriod(settings.shutdownQuietPeriod())
                        .timeout(settings.shutdownTimeout())
                        .build())
                // Armeria's connection drain (1 s) stays, whatever the quiet period: it is also the drain of a
                // connection closed while the server runs (OpenConnections); a stop shortens it (stopDrain).
                .childChannelPipelineCustomizer(connections::track)
                .errorHandler(new JsonErrors(settings.maxBodyBytes()));
    }

    /**
     * How long a stop gives the client connections still open when the ports close to notice the shutdown (an
     * HTTP/2 GOAWAY first, the closing GOAWAY at the end): Armeria's drain (1 s), but never longer than the quiet
     * period, which asks to stop sooner when shorter and at once when {@code 0s} (a test server's stop with a gRPC
     * client connected took 2 s with the full drain; about 15 ms now). Only the stop's: a connection Armeria closes
     * while the server runs keeps the full drain ({@link OpenConnections}).
     */
    static Duration stopDrain(Duration quietPeriod) {
        Duration armeriaDefault = armeriaDrain();
        return quietPeriod.compareTo(armeriaDefault) < 0 ? quietPeriod : armeriaDefault;
    }

    /** Armeria's connection drain, which every server of this stack keeps while it runs. */
    static Duration armeriaDrain() {
        return Duration.ofNanos(Flags.defaultServerConnectionDrainDurationMicros() * 1_000);
    }

    /**
     * What the gRPC transport accepts: twice the configured limit, so that a compressed message may inflate a
     * little past it and still be refused by the service with a message naming the limit. A larger body is cut
     * off by the transport; every size refusal is RESOURCE_EXHAUSTED naming the limit ({@link GrpcFraming}).
     */
    static int grpcTransportLimit(Settings settings) {
        return (int) Math.min(Integer.MAX_VALUE, 2L * settings.maxBodyBytes() + 1024);
    }
}
