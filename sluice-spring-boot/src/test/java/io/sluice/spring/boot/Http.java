package io.sluice.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;

/** A real HTTP client for the test applications, and the checks every 429 must pass. */
final class Http {

    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10)).build();
    private static final ObjectMapper JSON = new ObjectMapper();

    private Http() {}

    static HttpRequest request(int port, String path, String... headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(30)).GET();
        for (int i = 0; i < headers.length; i += 2) {
            b.header(headers[i], headers[i + 1]);
        }
        return b.build();
    }

    static HttpResponse<String> get(int port, String path, String... headers) {
        try {
            return CLIENT.send(request(port, path, headers), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Sends all requests at once and returns how many got each status. */
    static Map<Integer, Integer> statuses(List<HttpRequest> requests) {
        List<CompletableFuture<HttpResponse<String>>> sent = new ArrayList<>();
        for (HttpRequest r : requests) {
            sent.add(CLIENT.sendAsync(r, HttpResponse.BodyHandlers.ofString()));
        }
        Map<Integer, Integer> counts = new TreeMap<>();
        for (CompletableFuture<HttpResponse<String>> f : sent) {
            counts.merge(f.join().statusCode(), 1, Integer::sum);
        }
        return counts;
    }

    static JsonNode json(HttpResponse<String> response) {
        try {
            return JSON.readTree(response.body());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String header(HttpResponse<?> response, String name) {
        return response.headers().firstValue(name).orElse(null);
    }

    /**
     * The 429 every rejection gets, field by field: Retry-After equal to the RateLimit item's t, the
     * problem+json members, and the rule and limit named.
     */
    static void assertRejected(HttpResponse<String> r, String rule, String limit, String instance, String policy) {
        assertThat(r.statusCode()).isEqualTo(429);
        assertThat(header(r, "Content-Type")).startsWith("application/problem+json");
        String retryAfter = header(r, "Retry-After");
        assertThat(retryAfter).matches("[1-9][0-9]*");
        assertThat(header(r, "RateLimit")).isEqualTo("\"" + limit + "\";r=0;t=" + retryAfter);
        assertThat(header(r, "RateLimit-Policy")).isEqualTo(policy);
        JsonNode p = json(r);
        assertThat(p.get("type").asText()).isEqualTo("about:blank");
        assertThat(p.get("title").asText()).isEqualTo("Too Many Requests");
        assertThat(p.get("status").asInt()).isEqualTo(429);
        assertThat(p.get("detail").asText()).isEqualTo("Rate limit '" + limit + "' of rule '" + rule
                + "' exceeded; retry after " + retryAfter + " s");
        assertThat(p.get("instance").asText()).isEqualTo(instance);
        assertThat(p.get("rule").asText()).isEqualTo(rule);
        assertThat(p.get("limit").asText()).isEqualTo(limit);
        assertThat(p.get("retry_after").asLong()).isEqualTo(Long.parseLong(retryAfter));
        assertThat(p.size()).as("members of " + p).isEqualTo(8);
    }
}
