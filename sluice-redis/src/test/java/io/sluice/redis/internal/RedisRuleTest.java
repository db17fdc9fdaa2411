package io.sluice.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.FixedWindow;
import io.sluice.Lockout;
import io.sluice.Request;
import io.sluice.Rule;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The versions a compiled rule remembers and the script arguments it makes of them. */
class RedisRuleTest {

    private final SluiceScript script = SluiceScript.get();
    private final KeyLayout layout = new KeyLayout("sluice");

    private static FixedWindow perMinute(long limit) {
        return FixedWindow.of(limit, Duration.ofMinutes(1)).named("per_minute");
    }

    private static FixedWindow perSecond(long limit) {
        return FixedWindow.of(limit, Duration.ofSeconds(1)).named("per_second");
    }

    private List<String> args(RedisRule... rules) {
        List<DecisionCall.Target> targets = Arrays.stream(rules)
                .map(r -> new DecisionCall.Target(r, "k", r.stateKeys(layout, "k"))).toList();
        return List.of(DecisionCall.decide(targets, Request.tryAcquire(1), "", "id", layout, "3000").call().args());
    }

    @Test
    void aFirstVersionSendsThreeArgumentsPerLimitAndNothingElse() {
        RedisRule rule = RedisRule.compile(Rule.of("api", perMinute(10), perSecond(2)), script);
        assertThat(rule.fingerprint(0)).isEqualTo(LimitParams.fingerprint("fixed_window", "10 60000000 epoch 0"));
        assertThat(rule.previous(0)).isEmpty();
        assertThat(args(rule)).containsExactly("try", "1", "0", "", "id", "3000", "2",
                "fixed_window", rule.fingerprint(0), "10 60000000 epoch 0",
                "fixed_window", rule.fingerprint(1), "2 1000000 epoch 0");
    }

    @Test
    void aVersionWithoutTheLockoutItsPredecessorHadDeletesTheLockoutsKey() {
        Rule plain = Rule.of("login", perMinute(5));
        Rule locking = plain.withLockout(Lockout.of(3, Duration.ofMinutes(15), Duration.ofHours(1)));
        RedisRule v1 = RedisRule.compile(locking, script);
        assertThat(args(v1).get(6)).isEqualTo("1|3 900000000 3600000000");
        assertThat(v1.dropsLockout()).isFalse();
        RedisRule v2 = RedisRule.compile(plain, script, v1);
        assertThat(v2.dropsLockout()).isTrue();
        DecisionCall.Target t = new DecisionCall.Target(v2, "k", v2.stateKeys(layout, "k"));
        ScriptCall call = DecisionCall.decide(List.of(t), Request.tryAcquire(1), "", "id", layout, "3000").call();
        assertThat(call.args()[6]).isEqualTo("1|drop");
        assertThat(call.keys()).as("the limit, the request id, the lockout's key last").hasSize(3)
                .endsWith(layout.lockoutKey("login", "k"));
        RedisRule v3 = RedisRule.compile(plain.withLimit(perMinute(6)), script, v2);
        assertThat(v3.dropsLockout()).as("still without the lockout: still deleting").isTrue();
        assertThat(RedisRule.compile(locking, script, v3).dropsLockout()).as("added back").isFalse();
        assertThat(RedisRule.compile(plain, script).dropsLockout()).as("a process that never saw it").isFalse();
    }

    @Test
    void aChangedLimitSendsItsPreviousVersionsAfterAllLimits() {
        RedisRule v1 = RedisRule.compile(Rule.of("api", perMinute(10), perSecond(2)), script);
        RedisRule v2 = RedisRule.compile(Rule.of("api", perMinute(10), perSecond(3)), script, v1);
        assertThat(v2.previous(0)).as("unchanged").isEmpty();
        assertThat(v2.previous(1)).containsExactly(v1.fingerprint(1), "2 1000000 epoch 0");
        RedisRule v3 = RedisRule.compile(Rule.of("api", perMinute(10), perSecond(4)), script, v2);
        assertThat(v3.previous(1)).as("most recent first").containsExactly(v2.fingerprint(1), "3 1000000 epoch 0",
                v1.fingerprint(1), "2 1000000 epoch 0");
        // Batched with another target, the limit index counts across targets.
        RedisRule other = RedisRule.compile(Rule.of("other", perSecond(1)), script);
        assertThat(args(other, v3)).containsExactly("try", "1", "0", "", "id", "3000", "3",
                "fixed_window", other.fingerprint(0), "1 1000000 epoch 0",
                "fixed_window", v3.fingerprint(0), "10 60000000 epoch 0",
                "fixed_window", v3.fingerprint(1), "4 1000000 epoch 0",
                "3", v2.fingerprint(1), "3 1000000 epoch 0",
                "3", v1.fingerprint(1), "2 1000000 epoch 0");
    }

    @Test
    void goingBackToAVersionKnowsTheOneInBetween() {
        RedisRule v1 = RedisRule.compile(Rule.of("api", perSecond(2)), script);
        RedisRule v2 = RedisRule.compile(Rule.of("api", perSecond(3)), script, v1);
        RedisRule back = RedisRule.compile(Rule.of("api", perSecond(2)), script, v2);
        assertThat(back.fingerprint(0)).isEqualTo(v1.fingerprint(0));
        assertThat(back.previous(0)).containsExactly(v2.fingerprint(0), "3 1000000 epoch 0");
    }

    @Test
    void atMostEightPreviousVersionsAreRemembered() {
        RedisRule rule = RedisRule.compile(Rule.of("api", perSecond(1)), script);
        for (int limit = 2; limit <= 12; limit++) {
            rule = RedisRule.compile(Rule.of("api", perSecond(limit)), script, rule);
        }
        String[] previous = rule.previous(0);
        assertThat(previous).hasSize(2 * RedisRule.MAX_PREVIOUS);
        assertThat(previous[1]).isEqualTo("11 1000000 epoch 0");
        assertThat(previous[previous.length - 1]).isEqualTo("4 1000000 epoch 0");
    }

    @Test
    void aRemovedLimitIsRememberedWhenItComesBack() {
        RedisRule v1 = RedisRule.compile(Rule.of("api", perMinute(10), perSecond(2)), script);
        RedisRule v2 = RedisRule.compile(Rule.of("api", perMinute(10)), script, v1);
        RedisRule v3 = RedisRule.compile(Rule.of("api", perMinute(10), perSecond(5)), script, v2);
        assertThat(v3.previous(1)).containsExactly(v1.fingerprint(1), "2 1000000 epoch 0");
    }
}
