package io.sluice.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.micrometer.core.instrument.MeterRegistry;
import io.sluice.Store;
import io.sluice.spring.boot.app.LimitedService;
import io.sluice.spring.boot.app.MvcApp;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A servlet application on a random port with the in-memory store, called over HTTP: the filter's routes, keys
 * and costs, its 429 field by field, exact limits under concurrent requests, {@code @RateLimited} on plain,
 * CompletableFuture, Mono and Flux methods, and the Actuator endpoint, health and meters.
 */
@SpringBootTest(classes = MvcApp.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "sluice.rules=classpath:test-rules.yaml",
        "sluice.define.limits.three_per_minute.algorithm=token_bucket",
        "sluice.define.limits.three_per_minute.capacity=3",
        "sluice.define.limits.three_per_minute.refill_tokens=3",
        "sluice.define.limits.three_per_minute.refill-period=1m",
        "sluice.define.rules.inline.limits=three_per_minute",
        "sluice.define.rules.inline.on-failure=fail_open",
        "sluice.web.routes[0].paths=/api/**",
        "sluice.web.routes[0].rule=api",
        "sluice.web.routes[0].key=header:X-Api-Key",
        "sluice.web.routes[1].paths=/bulk/{tenant}",
        "sluice.web.routes[1].methods=GET",
        "sluice.web.routes[1].rule=bulk",
        "sluice.web.routes[1].key=path-variable:tenant",
        "sluice.web.routes[1].cost=#{longHeader('X-Cost', 1)}",
        "management.endpoints.web.exposure.include=health,sluice",
        "management.endpoint.health.show-details=always",
        // spring-boot-starter-data-redis is on the test class path; this application has no Redis to check.
        "management.health.redis.enabled=false"})
class MvcMemoryIT {

    private static final String API_POLICY = "\"five_per_minute\";q=5;w=60";

    @LocalServerPort
    int port;
    @Autowired
    LimitedService service;
    @Autowired
    RateLimiterRegistry registry;
    @Autowired
    MeterRegistry meters;
    @Autowired
    Store store;

    @Test
    void admittedThenRejectedWithEveryField() {
        for (int i = 1; i <= 5; i++) {
            HttpResponse<String> ok = Http.get(port, "/api/items/7", "X-Api-Key", "alice");
            assertThat(ok.statusCode()).isEqualTo(200);
            assertThat(ok.body()).isEqualTo("item 7");
            assertThat(Http.header(ok, "RateLimit-Policy")).isEqualTo(API_POLICY);
            assertThat(Http.header(ok, "RateLimit")).matches("\"five_per_minute\";r=" + (5 - i) + ";t=[1-6]?[0-9]");
            assertThat(Http.header(ok, "Retry-After")).isNull();
        }
        HttpResponse<String> rejected = Http.get(port, "/api/items/7", "X-Api-Key", "alice");
        Http.assertRejected(rejected, "api", "five_per_minute", "/api/items/7", API_POLICY);
        // Another key has its own limit; a path no route matches is not limited.
        assertThat(Http.get(port, "/api/items/7", "X-Api-Key", "bob").statusCode()).isEqualTo(200);
        for (int i = 0; i < 7; i++) {
            assertThat(Http.get(port, "/open").statusCode()).isEqualTo(200);
        }
    }

    @Test
    void exactLimitUnderConcurrentRequests() {
        List<HttpRequest> requests = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            requests.add(Http.request(port, "/bulk/concurrent"));
        }
        assertThat(Http.statuses(requests)).isEqualTo(Map.of(200, 20, 429, 40));
    }

    @Test
    void costFromAnExpressionAndKeyFromAPathVariable() {
        HttpResponse<String> r = Http.get(port, "/bulk/costly", "X-Cost", "15");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(Http.header(r, "RateLimit")).isEqualTo("\"twenty_per_hour\";r=5;t=54000");
        assertThat(Http.get(port, "/bulk/costly", "X-Cost", "6").statusCode()).isEqualTo(429);
        assertThat(Http.get(port, "/bulk/costly", "X-Cost", "5").statusCode()).isEqualTo(200);
        HttpResponse<String> bad = Http.get(port, "/bulk/costly", "X-Cost", "lots");
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(Http.json(bad).get("detail").asText()).isEqualTo("header X-Cost must be a whole number");
        HttpResponse<String> tooMuch = Http.get(port, "/bulk/other", "X-Cost", "21");
        assertThat(tooMuch.statusCode()).isEqualTo(400);
        assertThat(Http.json(tooMuch).get("detail").asText()).contains("exceeds the most rule 'bulk' grants at once, 20");
    }

    @Test
    void annotationOnAControllerCallIsAnsweredWith429() {
        int before = service.ran();
        assertThat(Http.get(port, "/annotated?user=carol").body()).isEqualTo("hello carol");
        assertThat(Http.get(port, "/annotated?user=carol").statusCode()).isEqualTo(200);
        HttpResponse<String> r = Http.get(port, "/annotated?user=carol");
        Http.assertRejected(r, "calls", "two_per_minute", "/annotated", "\"two_per_minute\";q=2;w=60");
        assertThat(service.ran() - before).isEqualTo(2);
    }

    @Test
    void annotationOnFutureMonoAndFluxMethods() throws Exception {
        assertThat(service.future("dave").get()).isEqualTo("hello dave");
        assertThat(service.future("dave").get()).isEqualTo("hello dave");
        CompletableFuture<String> third = service.future("dave");
        assertThatThrownBy(third::get).isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(RateLimitExceededException.class);

        Mono<String> unsubscribed = service.mono("erin");
        for (int i = 0; i < 2; i++) {
            assertThat(service.mono("erin").block()).isEqualTo("hello erin");
        }
        // Nothing is decided until subscription: the Mono made first is the third to ask.
        assertThatThrownBy(unsubscribed::block).isInstanceOf(RateLimitExceededException.class)
                .hasMessage("rate limit exceeded: rule 'calls', limit 'two_per_minute', retry after 60 s");

        Flux<Integer> twelve = service.flux("frank", 12);
        assertThat(twelve.collectList().block()).hasSize(12);
        assertThatThrownBy(() -> service.flux("frank", 9).collectList().block())
                .isInstanceOf(RateLimitExceededException.class);
        assertThat(service.flux("frank", 8).collectList().block()).hasSize(8);
    }

    @Test
    void annotationWithMaxWaitWaitsInsteadOfRejecting() {
        // One permit per 200 ms and a 2 s wait: every call gets through, in turn.
        for (int i = 0; i < 3; i++) {
            assertThat(service.paced("gina")).isEqualTo("paced gina");
        }
    }

    @Test
    void rulesFromPropertiesAndTheRegistry() {
        assertThat(registry.limiters().keySet()).containsExactly("api", "bulk", "calls", "paced", "inline");
        var inline = registry.limiter("inline");
        assertThat(inline.rule().failurePolicy().kind()).isEqualTo(io.sluice.FailurePolicy.Kind.FAIL_OPEN);
        assertThat(inline.tryAcquire("k", 3).allowed()).isTrue();
        assertThat(inline.tryAcquire("k", 1).allowed()).isFalse();
        assertThatThrownBy(() -> registry.limiter("nope")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("no rule 'nope'; rules are [api, bulk, calls, paced, inline]");
        assertThat(registry.store()).isSameAs(store);
    }

    @Test
    void actuatorEndpointHealthAndMeters() {
        Http.get(port, "/api/items/1", "X-Api-Key", "henry");
        JsonNode rules = Http.json(Http.get(port, "/actuator/sluice"));
        assertThat(rules.get("rules").get("api").get("policy").asText()).isEqualTo(API_POLICY);
        JsonNode key = Http.json(Http.get(port, "/actuator/sluice/api/henry"));
        assertThat(key.get("remaining").asLong()).isEqualTo(4);
        assertThat(key.get("allowed").asBoolean()).isTrue();
        assertThat(Http.get(port, "/actuator/sluice/nope/henry").statusCode()).isEqualTo(404);
        JsonNode health = Http.json(Http.get(port, "/actuator/health"));
        assertThat(health.get("components").get("sluice").get("status").asText()).isEqualTo("UP");
        assertThat(meters.find("sluice.limiter.decisions").tag("rule", "api").counters()).isNotEmpty();
    }
}
