package io.sluice.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class LogTest {

    @Test
    void fillsPlaceholdersInOrderAndLeavesExtraOnesAsTheyAre() {
        assertThat(Log.format("Redis at {}: opened after {} failures", new Object[] {"h:1", 3}, 2))
                .isEqualTo("Redis at h:1: opened after 3 failures");
        assertThat(Log.format("{} and {}", new Object[] {"a"}, 1)).isEqualTo("a and {}");
        assertThat(Log.format("no placeholders", new Object[] {"x"}, 1)).isEqualTo("no placeholders");
    }
}
