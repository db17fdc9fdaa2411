package io.sluice.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.SluiceListener;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Every listener bean hears each decision, with its key when it asks for it. */
class CompositeListenerTest {

    @Test
    void passesTheKeyToListenersThatTakeItAndTheDecisionToThoseThatDoNot() {
        List<String> heard = new ArrayList<>();
        SluiceListener withKey = new SluiceListener() {
            @Override
            public void onDecision(Rule rule, String key, Decision decision) {
                heard.add("key " + key + " " + decision.allowed());
            }
        };
        SluiceListener withoutKey = new SluiceListener() {
            @Override
            public void onDecision(Rule rule, Decision decision) {
                heard.add("rule " + rule.name() + " " + decision.allowed());
            }
        };
        SluiceListener composite = CompositeListener.of(List.of(withKey, withoutKey));
        try (RateLimiter limiter = RateLimiter.builder(Rule.of("api", FixedWindow.of(1, Duration.ofHours(1))))
                .listener(composite).build()) {
            limiter.tryAcquire("user:1");
            limiter.tryAcquire("user:1");
        }
        assertThat(heard).containsExactly("key user:1 true", "rule api true", "key user:1 false", "rule api false");
    }
}
