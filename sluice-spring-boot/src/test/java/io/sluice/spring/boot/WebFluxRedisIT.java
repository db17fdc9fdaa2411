package io.sluice.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.sluice.Store;
import io.sluice.redis.RedisStore;
import io.sluice.spring.boot.app.WebFluxApp;
import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.SharedRedis;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * A WebFlux application on a random port with the Redis store (a real redis-server, through
 * {@code sluice.redis.uri}), called over HTTP: the WebFilter's 429 field by field, exact limits under concurrent
 * requests, {@code @RateLimited} on a Mono handler answered with 429, and the health of the Redis store.
 */
@ExtendWith(SharedRedis.class)
@SpringBootTest(classes = WebFluxApp.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "spring.main.web-application-type=reactive",
        "sluice.rules=classpath:test-rules.yaml",
        "sluice.store=redis",
        // Generous: this test is about exact counts, and a loaded CI machine must not turn a slow reply into a 500.
        "sluice.redis.timeout=10s",
        "sluice.web.routes[0].paths=/api/items/{id}",
        "sluice.web.routes[0].rule=api",
        "sluice.web.routes[0].key=#{header('X-Api-Key') + '@' + pathVariable('id')}",
        "sluice.web.routes[1].paths=/bulk/{tenant}",
        "sluice.web.routes[1].rule=bulk",
        "sluice.web.routes[1].key=path-variable:tenant",
        "sluice.web.admitted-headers=false",
        "management.endpoints.web.exposure.include=health,sluice",
        "management.endpoint.health.show-details=always"})
class WebFluxRedisIT {

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        registry.add("sluice.redis.uri", () -> RedisServer.shared().uri());
        // spring-boot-starter-data-redis is present too (its ClientResources are shared with the store): point it at
        // the same server, so that its health check does not look for one on 6379.
        registry.add("spring.data.redis.port", () -> RedisServer.shared().port());
        // A prefix of this run's own: the shared server outlives one test class.
        String prefix = "webflux" + System.nanoTime();
        registry.add("sluice.redis.prefix", () -> prefix);
    }

    @LocalServerPort
    int port;
    @Autowired
    Store store;

    @Test
    void rejectedWithEveryFieldAndAdmittedWithout() {
        assertThat(store).isInstanceOf(RedisStore.class);
        for (int i = 0; i < 5; i++) {
            HttpResponse<String> ok = Http.get(port, "/api/items/3", "X-Api-Key", "alice");
            assertThat(ok.statusCode()).isEqualTo(200);
            assertThat(Http.header(ok, "RateLimit")).as("admitted-headers=false").isNull();
        }
        Http.assertRejected(Http.get(port, "/api/items/3", "X-Api-Key", "alice"), "api", "five_per_minute",
                "/api/items/3", "\"five_per_minute\";q=5;w=60");
        // The key expression joins the header and the path variable: another item is another key.
        assertThat(Http.get(port, "/api/items/4", "X-Api-Key", "alice").statusCode()).isEqualTo(200);
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
    void annotatedMonoHandlerIsAnsweredWith429() {
        assertThat(Http.get(port, "/annotated?user=ivy").body()).isEqualTo("hello ivy");
        assertThat(Http.get(port, "/annotated?user=ivy").statusCode()).isEqualTo(200);
        Http.assertRejected(Http.get(port, "/annotated?user=ivy"), "calls", "two_per_minute", "/annotated",
                "\"two_per_minute\";q=2;w=60");
    }

    @Test
    void healthReportsTheRedisStoreAndItsBreaker() {
        JsonNode sluice = Http.json(Http.get(port, "/actuator/health")).get("components").get("sluice");
        assertThat(sluice.get("status").asText()).isEqualTo("UP");
        assertThat(sluice.get("details").get("store").asText()).isEqualTo("redis");
        assertThat(sluice.get("details").get("breaker").asText()).isEqualTo("closed");
    }
}
