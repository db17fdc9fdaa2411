package io.sluice.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.FixedWindow;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.Store;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.ApplicationContextAssertProvider;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The auto-configuration without a server: defaults, back-off before the application's own beans, and start-up
 * failures that name the property at fault.
 */
class ConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class));
    private final WebApplicationContextRunner web = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class,
                    SluiceWebMvcAutoConfiguration.class));

    @Test
    void defaultsToAMemoryStoreAndNoRules() {
        runner.run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(RateLimiterRegistry.class).limiters()).isEmpty();
            assertThat(context.getBean(Store.class).getClass().getSimpleName()).isEqualTo("MemoryStore");
        });
    }

    @Test
    void backsOffBeforeTheApplicationsStoreAndRegistry() {
        runner.withUserConfiguration(OwnStore.class).withPropertyValues("sluice.rules=classpath:test-rules.yaml")
                .run(context -> {
                    assertThat(context.getBean(Store.class)).isSameAs(OwnStore.STORE);
                    assertThat(context.getBean(RateLimiterRegistry.class).store()).isSameAs(OwnStore.STORE);
                });
        runner.withUserConfiguration(OwnRegistry.class).run(context -> {
            assertThat(context).getBeans(RateLimiterRegistry.class).hasSize(1);
            assertThat(context.getBean(RateLimiterRegistry.class).limiters()).containsOnlyKeys("own");
        });
    }

    @Test
    void unknownRuleInARoute() {
        web.withPropertyValues("sluice.rules=classpath:test-rules.yaml", "sluice.web.routes[0].paths=/x",
                "sluice.web.routes[0].rule=apo").run(context -> assertFailure(context, "sluice.web.routes[0].rule",
                "sluice.web.routes[0].rule: no rule 'apo'; rules are [api, bulk, calls, paced]"));
    }

    @Test
    void badRouteFields() {
        web.withPropertyValues("sluice.rules=classpath:test-rules.yaml", "sluice.web.routes[0].paths=/x",
                "sluice.web.routes[0].rule=api", "sluice.web.routes[0].methods=FETCH").run(context -> assertFailure(
                context, "sluice.web.routes[0].methods[0]", "expected one of"));
        web.withPropertyValues("sluice.rules=classpath:test-rules.yaml", "sluice.web.routes[0].paths=/x",
                "sluice.web.routes[0].rule=api", "sluice.web.routes[0].key=cookie:id").run(context -> assertFailure(
                context, "sluice.web.routes[0].key", "expected client-address, principal, header:NAME"));
        web.withPropertyValues("sluice.rules=classpath:test-rules.yaml", "sluice.web.routes[0].paths=/x/{id}",
                "sluice.web.routes[0].rule=api", "sluice.web.routes[0].key=path-variable:user").run(context ->
                assertFailure(context, "sluice.web.routes[0].key", "path pattern '/x/{id}' has no variable {user}"));
        web.withPropertyValues("sluice.rules=classpath:test-rules.yaml", "sluice.web.routes[0].paths=/x",
                "sluice.web.routes[0].rule=api", "sluice.web.routes[0].cost=0").run(context -> assertFailure(
                context, "sluice.web.routes[0].cost", "expected at least 1, was 0"));
    }

    @Test
    void invalidOrMissingRuleFile() {
        runner.withPropertyValues("sluice.rules=classpath:test-rules.yaml,classpath:bad-rules.yaml").run(context ->
                assertFailure(context, "sluice.rules[1]", "sluice.rules[1]: invalid rule file: "
                        + "classpath:bad-rules.yaml:2"));
        runner.withPropertyValues("sluice.rules=classpath:nowhere.yaml").run(context ->
                assertFailure(context, "sluice.rules[0]", "no rule file at 'classpath:nowhere.yaml'"));
        runner.withPropertyValues("sluice.rules=classpath:test-rules.yaml,classpath:test-rules.yaml").run(context ->
                assertFailure(context, "sluice.rules[1]", "rule 'api' is already defined by sluice.rules[0]"));
    }

    @Test
    void tiersInPropertiesDecideTheirKeysInTheOrderGiven() {
        runner.withPropertyValues("sluice.define.limits.base.algorithm=fixed_window",
                "sluice.define.limits.base.limit=1", "sluice.define.limits.base.window=1m",
                "sluice.define.limits.gold.algorithm=fixed_window", "sluice.define.limits.gold.limit=3",
                "sluice.define.limits.gold.window=1m",
                "sluice.define.rules.api.limits=base",
                "sluice.define.rules.api.tiers.premium.keys=tenant-acme,tenant-big-*",
                "sluice.define.rules.api.tiers.premium.limits=gold",
                "sluice.define.rules.api.tiers.internal.keys=svc-*",
                "sluice.define.rules.api.tiers.internal.unlimited=true",
                "sluice.define.rules.api.tiers.evil.keys=tenant-evil",
                "sluice.define.rules.api.tiers.evil.blocked=true").run(context -> {
                    assertThat(context).hasNotFailed();
                    RateLimiter api = context.getBean(RateLimiterRegistry.class).limiter("api");
                    assertThat(api.rule().tiers()).extracting(io.sluice.Tier::name)
                            .containsExactly("premium", "internal", "evil");
                    assertThat(api.tryAcquire("tenant-big-1", 3).allowed()).isTrue();
                    assertThat(api.tryAcquire("tenant-big-1").limit()).isEqualTo("gold");
                    assertThat(api.tryAcquire("svc-a", 1000).tier()).isEqualTo("internal");
                    assertThat(api.tryAcquire("tenant-evil").allowed()).isFalse();
                    assertThat(api.tryAcquire("plain").allowed()).isTrue();
                    assertThat(api.tryAcquire("plain").allowed()).isFalse();
                });
    }

    @Test
    void invalidTiersInPropertiesNameTheProperty() {
        String[] base = {"sluice.define.limits.base.algorithm=fixed_window", "sluice.define.limits.base.limit=1",
                "sluice.define.limits.base.window=1m", "sluice.define.rules.api.limits=base"};
        runner.withPropertyValues(base).withPropertyValues("sluice.define.rules.api.tiers.gold.keys=a",
                "sluice.define.rules.api.tiers.gold.limits=base", "sluice.define.rules.api.tiers.gold.blocked=true")
                .run(context -> assertFailure(context, "sluice.define.rules.api.tiers.gold.blocked",
                        "exactly one of 'limits', 'unlimited: true' and 'blocked: true'"));
        runner.withPropertyValues(base).withPropertyValues("sluice.define.rules.api.tiers.gold.limits=base")
                .run(context -> assertFailure(context, "sluice.define.rules.api.tiers.gold", "missing 'keys'"));
        runner.withPropertyValues(base).withPropertyValues("sluice.define.rules.api.tiers.gold.keys=a",
                "sluice.define.rules.api.tiers.gold.limits=silver").run(context -> assertFailure(context,
                "sluice.define.rules.api.tiers.gold.limits[0]", "unknown limit \"silver\""));
    }

    @Test
    void invalidRuleInProperties() {
        runner.withPropertyValues("sluice.define.limits.x.algorithm=fixed_window", "sluice.define.limits.x.limit=0",
                "sluice.define.limits.x.window=1m", "sluice.define.rules.r.limits=x").run(context ->
                assertFailure(context, "sluice.define.limits.x.limit", "sluice.define.limits.x.limit: "));
        runner.withPropertyValues("sluice.define.limits.x.algorithm=fixed_window", "sluice.define.limits.x.limit=2",
                "sluice.define.limits.x.window=1m", "sluice.define.rules.r.limits=y").run(context ->
                assertFailure(context, "sluice.define.rules.r.limits[0]", "unknown limit \"y\""));
        runner.withPropertyValues("sluice.rules=classpath:test-rules.yaml", "sluice.defaults.on-failure=fail_later")
                .run(context -> assertFailure(context, "sluice.defaults.on-failure", "fail_later"));
    }

    @Test
    void unreachableRedisAndMissingUri() throws IOException {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0)) {
            closedPort = s.getLocalPort();
        }
        runner.withPropertyValues("sluice.store=redis", "sluice.redis.uri=redis://127.0.0.1:" + closedPort,
                "sluice.redis.timeout=300ms").run(context -> assertFailure(context, "sluice.redis.uri",
                "sluice.redis.uri: cannot reach Redis through sluice.redis.uri: cannot connect to Redis at "
                        + "redis://127.0.0.1:" + closedPort));
        runner.withPropertyValues("sluice.store=redis").run(context -> assertFailure(context, "sluice.redis.uri",
                "required when sluice.store=redis"));
        runner.withPropertyValues("sluice.store=redis", "sluice.redis.uri=http://x").run(context ->
                assertFailure(context, "sluice.redis.uri", "uri must start with one of"));
        runner.withPropertyValues("sluice.store=redis", "sluice.redis.uri=redis://127.0.0.1:" + closedPort,
                "sluice.redis.timeout=0s").run(context -> assertFailure(context, "sluice.redis.timeout",
                "timeout must be between 1ms and"));
        runner.withPropertyValues("sluice.store=redis", "sluice.redis.uri=redis://127.0.0.1:" + closedPort,
                "sluice.redis.scripting=lua").run(context -> assertFailure(context, "sluice.redis.scripting",
                "sluice.redis.scripting must be auto, functions or eval, was 'lua'"));
    }

    @Test
    void unknownRuleInAnAnnotation() {
        runner.withUserConfiguration(BadAnnotation.class).withPropertyValues("sluice.rules=classpath:test-rules.yaml")
                .run(context -> assertFailure(context, "@RateLimited on " + BadAnnotation.Limited.class.getName()
                        + ".call rule", "no rule 'missing'; rules are [api, bulk, calls, paced]"));
    }

    private static void assertFailure(ApplicationContextAssertProvider<?> context, String property, String message) {
        assertThat(context.getStartupFailure()).as("start-up failure").isNotNull();
        Throwable t = context.getStartupFailure();
        Optional<SluiceConfigurationException> cause = Optional.empty();
        while (t != null) {
            if (t instanceof SluiceConfigurationException e) {
                cause = Optional.of(e);
            }
            t = t.getCause();
        }
        assertThat(cause).as("a SluiceConfigurationException in " + context.getStartupFailure()).isPresent();
        assertThat(cause.get().property()).isEqualTo(property);
        assertThat(cause.get().getMessage()).contains(message);
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnStore {
        static final Store STORE = Store.memory().build();

        @Bean
        Store store() {
            return STORE;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnRegistry {
        @Bean
        RateLimiterRegistry ownRegistry() {
            Store store = Store.memory().build();
            RateLimiter own = RateLimiter.builder(Rule.of("own", FixedWindow.of(1, Duration.ofSeconds(1))))
                    .store(store).build();
            return new RateLimiterRegistry() {
                @Override
                public RateLimiter limiter(String rule) {
                    return own;
                }

                @Override
                public Optional<RateLimiter> find(String rule) {
                    return Optional.of(own);
                }

                @Override
                public Map<String, RateLimiter> limiters() {
                    return Map.of("own", own);
                }

                @Override
                public Store store() {
                    return store;
                }
            };
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class BadAnnotation {
        @Bean
        Limited limited() {
            return new Limited();
        }

        static class Limited {
            @RateLimited(rule = "missing")
            public void call() {
            }
        }
    }
}
