package io.sluice.testkit.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class RedisServerTest {

    @Test
    void aMissingExecutableSaysHowToInstallIt() {
        assertThatThrownBy(() -> RedisServer.executable("redis-server-that-does-not-exist"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("is not on the PATH")
                .hasMessageContaining("apt-get install redis-server")
                .hasMessageContaining("./run-tests");
    }

    @Test
    void commandsAreRespArraysOfBulkStrings() {
        assertThat(new String(RespConnection.encode("SET", "k", "é"), StandardCharsets.UTF_8))
                .isEqualTo("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\né\r\n");
    }
}
