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
 * client (no sluice.redis.uri: the store reuses the application's Lettuce client); one runs the scripts with
 * EVALSHA ({@code sluice.redis.scripting=eval}), the other as functions, on the same states.
 */
@ExtendWith(SharedRedis.class)
class SharedLimitIT {

    @Test
    void twoApplicationsShareOneLimit(RedisServer redis) {
        String prefix = "shared" + System.nanoTime();
        long evalshasBefore = calls(redis, "evalsha");
        long fcallsBefore = calls(redis, "fcall");
        try (ConfigurableApplicationContext a = start(redis, prefix, "eval");
             ConfigurableApplicationContext b = start(redis, prefix, "auto")) {
            assertThat(a.getBean(Store.class).toString()).contains("application's RedisClient");
            int portA = ((WebServerApplicationContext) a).getWebServer().getPort();
            int portB = ((WebServerApplicationContext) b).getWebServer().getPort();
            List<HttpRequest> requests = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                requests.add(Http.request(i % 2 == 0 ? portA : portB, "/bulk/fleet"));
            }
            assertThat(Http.statuses(requests)).isEqualTo(Map.of(200, 20, 429, 30));
        }
        // Each application made 25 decisions; denials cached in process may skip Redis, admissions never do.
        assertThat(calls(redis, "evalsha") - evalshasBefore).as("EVALSHA calls of the eval application")
                .isGreaterThanOrEqualTo(10);
        assertThat(calls(redis, "fcall") - fcallsBefore).as("FCALL calls of the auto application")
                .isGreaterThanOrEqualTo(10);
    }

    /** The calls of one command in Redis's {@code INFO commandstats}, 0 when it has not seen it. */
    private static long calls(RedisServer redis, String command) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("cmdstat_" + command + ":calls=(\\d+)")
                .matcher(String.valueOf(redis.call("INFO", "commandstats")));
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }

    private static ConfigurableApplicationContext start(RedisServer redis, String prefix, String scripting) {
        return new SpringApplicationBuilder(MvcApp.class).properties(
                "server.port=0",
                "spring.data.redis.host=" + redis.host(),
                "spring.data.redis.port=" + redis.port(),
                "sluice.rules=classpath:test-rules.yaml",
                "sluice.store=redis",
                "sluice.redis.timeout=10s",
                "sluice.redis.prefix=" + prefix,
                "sluice.redis.scripting=" + scripting,
                "sluice.web.routes[0].paths=/bulk/{tenant}",
                "sluice.web.routes[0].rule=bulk",
                "sluice.web.routes[0].key=path-variable:tenant").run();
    }
}
