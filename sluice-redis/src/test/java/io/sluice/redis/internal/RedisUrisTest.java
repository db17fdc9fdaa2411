package io.sluice.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisCredentials;
import io.lettuce.core.RedisURI;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class RedisUrisTest {

    private static final Duration T = Duration.ofSeconds(1);

    @Test
    void standaloneWithAclCredentialsAndDatabase() {
        RedisURI u = RedisUris.parse(RedisUris.split("redis://app:s3cret@cache.internal:6380/2"), false, T).get(0);
        assertThat(u.getHost()).isEqualTo("cache.internal");
        assertThat(u.getPort()).isEqualTo(6380);
        assertThat(u.getDatabase()).isEqualTo(2);
        RedisCredentials credentials = u.getCredentialsProvider().resolveCredentials().block();
        assertThat(credentials.getUsername()).isEqualTo("app");
        assertThat(String.valueOf(credentials.getPassword())).isEqualTo("s3cret");
        assertThat(u.isSsl()).isFalse();
    }

    @Test
    void tlsScheme() {
        RedisURI u = RedisUris.parse(RedisUris.split("rediss://:pw@secure.example:6379"), false, T).get(0);
        assertThat(u.isSsl()).isTrue();
        assertThat(String.valueOf(u.getCredentialsProvider().resolveCredentials().block().getPassword())).isEqualTo("pw");
    }

    @Test
    void sentinelIsOneUriWithItsCommaSeparatedSentinels() {
        List<String> split = RedisUris.split("redis-sentinel://s1:26379,s2:26380/?sentinelMasterId=mymaster");
        assertThat(split).hasSize(1);
        RedisURI u = RedisUris.parse(split, false, T).get(0);
        assertThat(u.getSentinelMasterId()).isEqualTo("mymaster");
        assertThat(u.getSentinels()).extracting(RedisURI::getHost).containsExactly("s1", "s2");
        assertThat(RedisUris.describe(List.of(u))).isEqualTo("sentinel s1:26379 master mymaster");
    }

    @Test
    void clusterSeedsInheritTheFirstSchemeAndCredentials() {
        List<String> seeds = RedisUris.split("rediss://:pw@10.0.0.1:7000, 10.0.0.2:7001,redis://10.0.0.3:7002");
        assertThat(seeds).containsExactly("rediss://:pw@10.0.0.1:7000", "rediss://:pw@10.0.0.2:7001",
                "redis://10.0.0.3:7002");
        List<RedisURI> parsed = RedisUris.parse(seeds, true, T);
        assertThat(parsed).extracting(RedisURI::getPort).containsExactly(7000, 7001, 7002);
        assertThat(parsed.get(1).isSsl()).isTrue();
    }

    @Test
    void topologyMismatchesAreClearErrors() {
        assertThatThrownBy(() -> RedisUris.parse(RedisUris.split("redis://a:1,redis://b:2"), false, T))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cluster(true)");
        assertThatThrownBy(() -> RedisUris.parse(RedisUris.split("redis-sentinel://s:26379/?sentinelMasterId=m"), true, T))
                .hasMessageContaining("Sentinel");
        assertThatThrownBy(() -> RedisUris.parse(RedisUris.split("redis://a:7000/3"), true, T))
                .hasMessageContaining("database");
        assertThatThrownBy(() -> RedisUris.parse(List.of(), false, T)).hasMessageContaining("uri is required");
    }

    @Test
    void badUrisAreRejectedWithoutLeakingPasswords() {
        assertThatThrownBy(() -> RedisUris.split("http://u:topsecret@host:6379"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("redis://").hasMessageNotContaining("topsecret");
        assertThatThrownBy(() -> RedisUris.split(" ")).hasMessageContaining("uri");
        assertThatThrownBy(() -> RedisUris.split("redis://a:1,,b:2")).hasMessageContaining("empty element");
        assertThat(RedisUris.redact("redis://u:topsecret@h:1")).isEqualTo("redis://***@h:1");
    }

    @Test
    void everyUriCarriesTheStoreTimeout() {
        assertThat(RedisUris.parse(RedisUris.split("redis://h:1"), false, Duration.ofMillis(250)).get(0).getTimeout())
                .isEqualTo(Duration.ofMillis(250));
    }
}
