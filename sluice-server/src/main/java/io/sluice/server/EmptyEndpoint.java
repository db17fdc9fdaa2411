package io.sluice.server;

import com.linecorp.armeria.common.HttpData;
import com.linecorp.armeria.common.HttpMethod;
import com.linecorp.armeria.common.HttpResponse;
import com.linecorp.armeria.common.HttpStatus;
import com.linecorp.armeria.common.MediaType;
import com.linecorp.armeria.common.ResponseHeaders;
import com.linecorp.armeria.server.Server;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The ceiling {@code sluice serve} is measured against ({@code ./sluice bench}'s server suite): the same HTTP
 * stack ({@link HttpStack}: Armeria, the same server settings) answering {@code POST /v1/check} with a constant
 * 200 and a small constant JSON body, without reading the request or touching a store. Whatever the server
 * does beyond this is the price of parsing, deciding and answering.
 *
 * <p>Run as {@code java -cp ... io.sluice.server.EmptyEndpoint [PORT]} (default 0: a free port); prints the
 * same {@code HTTP on ...} and {@code sluice serve: ready} lines as {@code sluice serve}, on loopback, and runs
 * until it is stopped. Not a user-facing command.
 */
public final class EmptyEndpoint {

    /** The answer: about the size of a real allowed decision's body, so the bytes written compare too. */
    private static final byte[] BODY = ("{\"allowed\":true,\"remaining\":99,\"limit\":\"per_key\"}")
            .getBytes(StandardCharsets.UTF_8);

    private EmptyEndpoint() {}

    /** Builds the endpoint's server on {@code port} of loopback, not started, its connections in {@code open}. */
    static Server build(int port, OpenConnections open) {
        Settings settings = SluiceServer.builder().httpPort(port).shutdown(Duration.ZERO, Duration.ofSeconds(10))
                .settings();
        ResponseHeaders headers = ResponseHeaders.of(HttpStatus.OK, com.linecorp.armeria.common.HttpHeaderNames
                .CONTENT_TYPE, MediaType.JSON_UTF_8);
        var sb = HttpStack.base(settings, settings.httpPort(), settings.maxBodyBytes(), open);
        Routes.route(sb, HttpMethod.POST, "/v1/check", (ctx, req) -> HttpResponse.of(headers, HttpData.wrap(BODY)));
        return sb.build();
    }

    /** Starts the endpoint and serves until the JVM is stopped. */
    public static void main(String[] args) {
        int port = args.length == 0 ? 0 : Integer.parseInt(args[0]);
        OpenConnections open = new OpenConnections();
        Server server = build(port, open);
        server.start().join();
        // Its quiet period is 0, so a stop closes the connections at once, as sluice serve's does (SluiceServer).
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            open.closeWithDrainOnceThePortCloses(Duration.ZERO);
            ServerStop.released(server).join();
        }));
        System.out.println("empty endpoint: HTTP on http://" + Settings.DEFAULT_BIND + ":" + server.activeLocalPort());
        System.out.println("sluice serve: ready (empty endpoint); Ctrl-C stops");
        System.out.flush();
    }
}
