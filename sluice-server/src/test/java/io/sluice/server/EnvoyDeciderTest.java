package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.rules.EnvoyConfig;
import io.sluice.rules.EnvoyConfig.Entry;
import java.util.List;
import org.junit.jupiter.api.Test;

class EnvoyDeciderTest {

    @Test
    void keysOfDistinctDescriptorsAreDistinct() {
        String a = EnvoyDecider.key(List.of(new Entry("a", "b|c=d"), new Entry("e", "")));
        String b = EnvoyDecider.key(List.of(new Entry("a", "b"), new Entry("c", "d|e=")));
        assertThat(a).isEqualTo("a=b%7Cc%3Dd|e=");
        assertThat(a).isNotEqualTo(b);
        assertThat(EnvoyDecider.key(List.of(new Entry("%", "%7C")))).isEqualTo("%25=%257C");
    }

    @Test
    void theHeadlineIsTheLastOverTheLimitElseTheFewestRemaining() {
        EnvoyDecider.Status unmatched = status(false, null, 0);
        EnvoyDecider.Status ten = status(false, "ten", 10);
        EnvoyDecider.Status two = status(false, "two", 2);
        EnvoyDecider.Status overA = status(true, "a", 0);
        EnvoyDecider.Status overB = status(true, "b", 0);
        assertThat(EnvoyDecider.headline(List.of(unmatched))).isNull();
        assertThat(EnvoyDecider.headline(List.of(ten, two, unmatched))).isSameAs(two);
        assertThat(EnvoyDecider.headline(List.of(overA, two, overB, ten))).isSameAs(overB);
        assertThat(EnvoyDecider.policyField(List.of(ten, two, ten))).isEqualTo("\"ten\";q=5;w=60, \"two\";q=5;w=60");
    }

    private static EnvoyDecider.Status status(boolean over, String name, long remaining) {
        return new EnvoyDecider.Status(over, name, "", name, 5, name == null ? null : EnvoyConfig.Unit.MINUTE,
                remaining, 30, false, null);
    }
}
