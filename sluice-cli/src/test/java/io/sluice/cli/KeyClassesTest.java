package io.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class KeyClassesTest {

    @Test
    void digitRunsBecomeHashes() {
        KeyClasses classes = KeyClasses.digitRuns();
        assertThat(classes.classOf("user:42")).isEqualTo("user:#");
        assertThat(classes.classOf("10.0.0.1")).isEqualTo("#.#.#.#");
        assertThat(classes.classOf("42")).isEqualTo("#");
        assertThat(classes.classOf("a1b22c333")).isEqualTo("a#b#c#");
        assertThat(classes.classOf("login")).isEqualTo("login");
    }

    @Test
    void theDefaultIsTheSameAsItsRegex() {
        KeyClasses fast = KeyClasses.digitRuns();
        KeyClasses regex = KeyClasses.matching(Pattern.compile(KeyClasses.DIGITS));
        for (String key : new String[] {"user:42", "10.0.0.1", "x", "1", "a1b22c333", "tenant-7/user-9", "9z9"}) {
            assertThat(fast.classOf(key)).isEqualTo(regex.classOf(key));
        }
    }

    @Test
    void anotherPattern() {
        KeyClasses prefix = KeyClasses.matching(Pattern.compile(":.*"));
        assertThat(prefix.classOf("user:42")).isEqualTo("user#");
        assertThat(prefix.classOf("10.0.0.1")).isEqualTo("10.0.0.1");
    }
}
