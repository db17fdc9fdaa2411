package io.sluice;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.internal.algorithm.Algorithms;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class AlgorithmNameTest {

    /** One limit of each algorithm, built through the records' own factories. */
    private static final List<Limit> ONE_OF_EACH = List.of(FixedWindow.of(5, Duration.ofSeconds(1)),
            SlidingLog.of(5, Duration.ofSeconds(1)), SlidingWindow.of(5, Duration.ofSeconds(1)),
            RollingWindow.of(5, Duration.ofSeconds(1), Duration.ofMillis(100)),
            TokenBucket.of(5, 1, Duration.ofSeconds(1)), Gcra.of(5, Duration.ofSeconds(1)),
            LeakyBucket.of(5, Duration.ofSeconds(1)), SmoothBursty.of(5), SmoothWarmingUp.of(5, Duration.ofSeconds(1)),
            RefreshPeriod.of(5, Duration.ofSeconds(1)), Concurrency.of(5, Duration.ofSeconds(1)),
            CalendarWindow.of(5, CalendarWindow.Period.DAY, java.time.ZoneId.of("Europe/Berlin")));

    @Test
    void everyPermittedLimitRecordHasExactlyOneConstant() {
        List<Class<?>> permitted = Arrays.asList(Limit.class.getPermittedSubclasses());
        List<Class<?>> named = Arrays.stream(AlgorithmName.values()).<Class<?>>map(AlgorithmName::limitType).toList();
        assertThat(named).doesNotHaveDuplicates().containsExactlyElementsOf(permitted);
    }

    @Test
    void theNamesAreTheRuleFileSpellingsInReferenceOrder() {
        // Error messages and the rule-file reference list them in this order; tests elsewhere pin the words.
        assertThat(AlgorithmName.names()).containsExactly("fixed_window", "sliding_log", "sliding_window",
                "rolling_window", "token_bucket", "gcra", "leaky_bucket", "smooth_bursty", "smooth_warming_up",
                "refresh_period", "concurrency", "calendar_window");
        assertThat(AlgorithmName.parse("token_bucket")).contains(AlgorithmName.TOKEN_BUCKET);
        assertThat(AlgorithmName.parse("TOKEN_BUCKET")).isEmpty();
        assertThat(AlgorithmName.parse("leaky")).isEmpty();
    }

    @Test
    void eachRecordReportsItsConstantAndHasATransition() {
        assertThat(ONE_OF_EACH).hasSize(AlgorithmName.values().length);
        for (Limit limit : ONE_OF_EACH) {
            AlgorithmName a = AlgorithmName.of(limit);
            assertThat(a.limitType()).isSameAs(limit.getClass());
            assertThat(limit.algorithm()).isEqualTo(a.text()).isEqualTo(a.toString());
            // The default name of a record built by of(...) is its algorithm's name.
            assertThat(limit.name()).isEqualTo(a.text());
            assertThat(Algorithms.of(limit)).as(a.text()).isNotNull();
        }
        assertThat(ONE_OF_EACH.stream().map(AlgorithmName::of)).containsExactly(AlgorithmName.values());
    }
}
