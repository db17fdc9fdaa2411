package io.sluice.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class KeyLayoutTest {

    private final KeyLayout layout = new KeyLayout("sluice");

    @Test
    void everyLimitOfARuleOnAKeySharesOneHashTag() {
        assertThat(layout.stateKey("api", "user:42", "per_second")).isEqualTo("sluice:{api:user:42}:per_second");
        assertThat(layout.stateKey("api", "user:42", "per_minute")).isEqualTo("sluice:{api:user:42}:per_minute");
        assertThat(KeyLayout.hashTag(layout.stateKey("api", "user:42", "per_second"))).isEqualTo("api:user:42");
        assertThat(KeyLayout.slot(layout.stateKey("api", "user:42", "per_second")))
                .isEqualTo(KeyLayout.slot(layout.stateKey("api", "user:42", "per_minute")));
    }

    @Test
    void aKeyWithItsOwnTagKeepsItSoKeysSharingATagShareASlot() {
        String ip = layout.stateKey("per_ip", "{tenant7}:ip:10.0.0.1", "fixed_window");
        String user = layout.stateKey("per_user", "{tenant7}:user:42", "fixed_window");
        assertThat(ip).isEqualTo("sluice:per_ip:{tenant7}:ip:10.0.0.1:fixed_window");
        assertThat(KeyLayout.hashTag(ip)).isEqualTo("tenant7");
        assertThat(KeyLayout.slot(ip)).isEqualTo(KeyLayout.slot(user)).isEqualTo(KeyLayout.slot("{tenant7}"));
    }

    @Test
    void anEmptyOrUnclosedBraceIsNoTagAndGetsWrapped() {
        assertThat(layout.stateKey("r", "a{}b", "l")).isEqualTo("sluice:{r:a{}b}:l");
        assertThat(layout.stateKey("r", "{open", "l")).isEqualTo("sluice:{r:{open}:l");
        assertThat(layout.stateKey("r", "close}", "l")).isEqualTo("sluice:{r:close}}:l");
        // Redis reads the first '{' .. next '}' whatever follows: still one slot for all limits of the key.
        assertThat(KeyLayout.hashTag(layout.stateKey("r", "a}b", "x"))).isEqualTo("r:a");
        assertThat(KeyLayout.slot(layout.stateKey("r", "a}b", "x")))
                .isEqualTo(KeyLayout.slot(layout.stateKey("r", "a}b", "y")));
    }

    @Test
    void theRequestKeyLandsInTheSlotOfTheStateKeys() {
        for (String key : List.of("user:42", "{t}:x", "a}b", "a{}b", "日本語")) {
            String state = layout.stateKey("rule", key, "limit");
            String request = layout.requestKey(state, "abc.1");
            assertThat(KeyLayout.slot(request)).as(key).isEqualTo(KeyLayout.slot(state));
            assertThat(request).startsWith("sluice:{").endsWith("}:r:abc.1");
        }
    }

    @Test
    void ruleAndLimitNamesAreEscapedSoTheLayoutIsInjective() {
        assertThat(KeyLayout.escape("plain_name-1")).isEqualTo("plain_name-1");
        assertThat(KeyLayout.escape("a:b{c}%")).isEqualTo("a%3Ab%7Bc%7D%25");
        // Without escaping these three would collide: rule "a:b"/key "c" vs rule "a"/key "b:c".
        Set<String> keys = new HashSet<>(List.of(
                layout.stateKey("a:b", "c", "l"),
                layout.stateKey("a", "b:c", "l"),
                layout.stateKey("a", "b", "c:l"),
                layout.stateKey("a", "b:c:l", "x"),
                layout.stateKey("{a}", "b", "l"),
                layout.stateKey("a", "{b}", "l")));
        assertThat(keys).hasSize(6);
        assertThat(layout.stateKey("{a}", "b", "l")).isEqualTo("sluice:{%7Ba%7D:b}:l");
    }

    @Test
    void hashTagFollowsRedisRules() {
        assertThat(KeyLayout.hashTag("foo")).isNull();
        assertThat(KeyLayout.hashTag("{}foo")).isNull();
        assertThat(KeyLayout.hashTag("foo{bar}{zap}")).isEqualTo("bar");
        assertThat(KeyLayout.hashTag("foo{{bar}}")).isEqualTo("{bar");
        assertThat(KeyLayout.hashTag("foo{bar")).isNull();
        // Redis docs: {user1000}.following and {user1000}.followers hash the same.
        assertThat(KeyLayout.slot("{user1000}.following")).isEqualTo(KeyLayout.slot("{user1000}.followers"));
    }

    @Test
    void prefixMustNotMoveTheHashTag() {
        assertThatThrownBy(() -> new KeyLayout("a{b")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("prefix");
        assertThatThrownBy(() -> new KeyLayout("")).hasMessageContaining("prefix");
        assertThatThrownBy(() -> new KeyLayout("a b")).hasMessageContaining("whitespace");
        assertThat(new KeyLayout("app:rl").stateKey("r", "k", "l")).isEqualTo("app:rl:{r:k}:l");
    }
}
