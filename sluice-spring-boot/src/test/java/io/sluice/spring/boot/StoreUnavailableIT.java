package io.sluice.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.sluice.spring.boot.app.MvcApp;
import io.sluice.testkit.redis.RedisServer;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * A servlet application whose Redis goes away (a redis-server of this test's own, stopped mid-test): a rule with
 * the default {@code raise} policy is answered 503 with a problem+json body that names neither Redis nor its
 * address, not the container's 500; a {@code fail_open} rule still admits.
 */
@SpringBootTest(classes = MvcApp.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "sluice.rules=classpath:test-rules.yaml",
        "sluice.store=redis",
        "sluice.redis.timeout=2s",
        "sluice.define.limits.open_three.algorithm=fixed_window",
        "sluice.define.limits.open_three.limit=3",
        "sluice.define.limits.open_three.window=1m",
        "sluice.define.rules.open.limits=open_three",
        "sluice.define.rules.open.on-failure=fail_open",
        "sluice.web.routes[0].paths=/api/**",
        "sluice.web.routes[0].rule=api",
        "sluice.web.routes[0].key=header:X-Api-Key",
        "sluice.web.routes[1].paths=/bulk/{tenant}",
        "sluice.web.routes[1].rule=open",
        "sluice.web.routes[1].key=path-variable:tenant",
        "management.health.redis.enabled=false"})
class StoreUnavailableIT {

    private static final RedisServer REDIS = RedisServer.start();

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        registry.add("sluice.redis.uri", REDIS::uri);
        registry.add("spring.data.redis.port", REDIS::port);
    }

    @AfterAll
    static void stopRedis() {
        REDIS.close();
    }

    @LocalServerPort
    int port;

    @Test
    void aStoreOutOfReachIs503UnderRaiseAndTheFailOpenRuleStillAdmits() {
        assertThat(Http.get(port, "/api/items/1", "X-Api-Key", "alice").statusCode()).isEqualTo(200);

        REDIS.stop();

        HttpResponse<String> r = Http.get(port, "/api/items/1", "X-Api-Key", "alice");
        assertThat(r.statusCode()).isEqualTo(503);
        assertThat(Http.header(r, "Content-Type")).startsWith("application/problem+json");
        JsonNode body = Http.json(r);
        assertThat(body.get("status").asInt()).isEqualTo(503);
        assertThat(body.get("title").asText()).isEqualTo("Service Unavailable");
        assertThat(body.get("instance").asText()).isEqualTo("/api/items/1");
        assertThat(body.get("detail").asText()).contains("store is unavailable")
                .doesNotContain("Redis").doesNotContain(Integer.toString(REDIS.port()));

        assertThat(Http.get(port, "/bulk/acme").statusCode()).as("fail_open admits while Redis is away")
                .isEqualTo(200);
    }
}
