package io.sluice.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Store;
import io.sluice.spring.boot.app.MvcApp;
import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.SharedRedis;
import java.net.http.HttpRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Two applications on one Redis share one limit exactly, each through its own spring-boot-starter-data-redis
 * client (no sluice.redis.uri: the store reuses the application's Lettuce client).
 */
@ExtendWith(SharedRedis.class)
class SharedLimitIT {

    @Test
    void twoApplicationsShareOneLimit(RedisServer redis) {
        String prefix = "shared" + System.nanoTime();
        try (ConfigurableApplicationContext a = start(redis, prefix); ConfigurableApplicationContext b = start(redis, prefix)) {
            assertThat(a.getBean(Store.class).toString()).contains("application's RedisClient");
            int portA = ((WebServerApplicationContext) a).getWebServer().getPort();
            int portB = ((WebServerApplicationContext) b).getWebServer().getPort();
            List<HttpRequest> requests = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                requests.add(Http.request(i % 2 == 0 ? portA : portB, "/bulk/fleet"));
            }
            assertThat(Http.statuses(requests)).isEqualTo(Map.of(200, 20, 429, 30));
        }
    }

    private static ConfigurableApplicationContext start(RedisServer redis, String prefix) {
        return new SpringApplicationBuilder(MvcApp.class).properties(
                "server.port=0",
                "spring.data.redis.host=" + redis.host(),
                "spring.data.redis.port=" + redis.port(),
                "sluice.rules=classpath:test-rules.yaml",
                "sluice.store=redis",
                "sluice.redis.timeout=10s",
                "sluice.redis.prefix=" + prefix,
                "sluice.web.routes[0].paths=/bulk/{tenant}",
                "sluice.web.routes[0].rule=bulk",
                "sluice.web.routes[0].key=path-variable:tenant").run();
    }
}
