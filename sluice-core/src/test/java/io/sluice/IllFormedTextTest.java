package io.sluice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Keys, rule names and limit names with an unpaired surrogate are refused with IllegalArgumentException naming
 * the field, before anything is charged: no encoder could keep them apart from {@code "?"}.
 */
class IllFormedTextTest {

    private static final List<String> ILL_FORMED = List.of("s\uD800", "s\uDBFF", "s\uDC00", "\uDC00\uD800",
            "a\uD800b", "\uD83D");

    @Test
    void wellFormedTextPasses() {
        for (String ok : List.of("s", "s?", "user:42", "日本語", "\uD83D\uDE00 emoji", "\uFFFD", "\uFFFF")) {
            assertThat(Text.problem(ok)).as(ok).isNull();
            assertThat(Text.isWellFormed(ok)).isTrue();
        }
    }

    @Test
    void theProblemSaysWhichSurrogateAndWhere() {
        assertThat(Text.problem("s\uD800")).isEqualTo(
                "must be well-formed Unicode (found an unpaired surrogate U+D800 at index 1)");
        assertThat(Text.problem("\uD83D\uDE00\uDC00")).contains("U+DC00 at index 2");
        assertThat(Text.problem("\uD800\uD800\uDC00")).contains("U+D800 at index 0");
    }

    @Test
    void everyOperationRefusesAnIllFormedKeyAndChargesNothing() {
        try (RateLimiter limiter = RateLimiter.builder(Rule.of("r", FixedWindow.of(1, Duration.ofMinutes(1))))
                .build()) {
            for (String key : ILL_FORMED) {
                assertThatThrownBy(() -> limiter.tryAcquire(key)).as(key)
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessageStartingWith("key must be well-formed Unicode");
                assertThatThrownBy(() -> limiter.tryAcquireAsync(key, 1))
                        .isInstanceOf(IllegalArgumentException.class);
                assertThatThrownBy(() -> limiter.peek(key, 0)).isInstanceOf(IllegalArgumentException.class);
                assertThatThrownBy(() -> limiter.reset(key)).isInstanceOf(IllegalArgumentException.class);
                assertThatThrownBy(() -> limiter.release(key, 1)).isInstanceOf(IllegalArgumentException.class);
            }
            // Nothing was charged: "s?" — the bytes an encoder would have made of them — still has its permit.
            assertThat(limiter.tryAcquire("s?").allowed()).isTrue();
            assertThat(limiter.tryAcquire("s").allowed()).isTrue();
        }
    }

    @Test
    void ruleAndLimitNamesMustBeWellFormed() {
        assertThatThrownBy(() -> Rule.of("api\uD800", FixedWindow.of(1, Duration.ofSeconds(1))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("rule name must be well-formed Unicode");
        assertThatThrownBy(() -> FixedWindow.of(1, Duration.ofSeconds(1)).named("per\uDC00"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("name must be well-formed Unicode");
        assertThatThrownBy(() -> TokenBucket.of(1, 1, Duration.ofSeconds(1)).named("\uDBFF"))
                .hasMessageContaining("unpaired surrogate U+DBFF");
    }
}
