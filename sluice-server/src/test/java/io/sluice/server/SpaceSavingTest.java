package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class SpaceSavingTest {

    @Test
    void countsExactlyWhileEveryItemHasACounter() {
        SpaceSaving<String> s = new SpaceSaving<>(3);
        for (String item : List.of("a", "b", "a", "c", "a", "b")) {
            s.offer(item);
        }
        assertThat(s.estimate("a")).isEqualTo(new SpaceSaving.Estimate<>("a", 3, 0));
        assertThat(s.estimate("b")).isEqualTo(new SpaceSaving.Estimate<>("b", 2, 0));
        assertThat(s.estimate("c")).isEqualTo(new SpaceSaving.Estimate<>("c", 1, 0));
        assertThat(s.min()).isEqualTo(1);
    }

    @Test
    void aNewItemTakesTheSmallestCounterAndInheritsItsCountAsError() {
        // The worked example of the class comment.
        SpaceSaving<String> s = new SpaceSaving<>(2);
        for (String item : List.of("a", "a", "b", "c")) {
            s.offer(item);
        }
        assertThat(s.estimate("a")).isEqualTo(new SpaceSaving.Estimate<>("a", 2, 0));
        assertThat(s.estimate("b")).isNull();
        assertThat(s.estimate("c")).isEqualTo(new SpaceSaving.Estimate<>("c", 2, 1));
        assertThat(s.size()).isEqualTo(2);
    }

    @Test
    void boundsHoldOnASkewedStreamWithManyMoreItemsThanCounters() {
        Random random = new Random(42);
        int capacity = 50;
        for (int round = 0; round < 20; round++) {
            SpaceSaving<Integer> s = new SpaceSaving<>(capacity);
            Map<Integer, Long> truth = new HashMap<>();
            int n = 20_000;
            for (int i = 0; i < n; i++) {
                // A few heavy items among a long tail of rare ones.
                int item = random.nextInt(4) == 0 ? random.nextInt(5) : 5 + random.nextInt(5_000);
                s.offer(item);
                truth.merge(item, 1L, Long::sum);
            }
            assertThat(s.size()).isEqualTo(capacity);
            assertThat(s.offered()).isEqualTo(n);
            long sum = 0;
            for (SpaceSaving.Estimate<Integer> e : s.estimates()) {
                long t = truth.getOrDefault(e.item(), 0L);
                assertThat(t).as("true count of %s", e.item()).isBetween(e.count() - e.error(), e.count());
                sum += e.count();
            }
            assertThat(sum).isEqualTo(n);
            assertThat(s.min()).isLessThanOrEqualTo(n / capacity);
            for (Map.Entry<Integer, Long> t : truth.entrySet()) {
                if (t.getValue() > n / capacity) {
                    assertThat(s.estimate(t.getKey())).as("item %s seen %d times", t.getKey(), t.getValue())
                            .isNotNull();
                } else if (s.estimate(t.getKey()) == null) {
                    assertThat(t.getValue()).isLessThanOrEqualTo(s.min());
                }
            }
        }
    }

    @Test
    void clearForgetsEverything() {
        SpaceSaving<String> s = new SpaceSaving<>(2);
        s.offer("a");
        s.offer("b");
        s.offer("c");
        s.clear();
        assertThat(s.size()).isZero();
        assertThat(s.offered()).isZero();
        assertThat(s.min()).isZero();
        s.offer("d");
        assertThat(s.estimate("d")).isEqualTo(new SpaceSaving.Estimate<>("d", 1, 0));
    }

    @Test
    void refusesAZeroCapacity() {
        assertThatThrownBy(() -> new SpaceSaving<String>(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("capacity must be at least 1, was 0");
    }
}
