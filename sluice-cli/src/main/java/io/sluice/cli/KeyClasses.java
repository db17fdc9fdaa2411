package io.sluice.cli;

import java.util.regex.Pattern;

/**
 * Groups keys for the summary: a key's class is the key with every match of a pattern replaced by {@code #}.
 * The default pattern is a run of digits, so {@code user:42} and {@code user:7} are both {@code user:#} and
 * {@code 10.0.0.1} is {@code #.#.#.#}; {@code --key-class REGEX} sets another pattern (e.g. {@code :.*} gives
 * {@code user#} for every user key).
 */
final class KeyClasses {

    /** The default pattern. */
    static final String DIGITS = "[0-9]+";

    private final Pattern pattern;

    private KeyClasses(Pattern pattern) {
        this.pattern = pattern;
    }

    static KeyClasses digitRuns() {
        return new KeyClasses(null);
    }

    static KeyClasses matching(Pattern pattern) {
        return new KeyClasses(pattern);
    }

    String classOf(String key) {
        if (pattern != null) {
            return pattern.matcher(key).replaceAll("#");
        }
        // The default, without a regex: it runs once per summarised line.
        StringBuilder s = null;
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            boolean digit = c >= '0' && c <= '9';
            if (digit && s == null) {
                s = new StringBuilder(key.length()).append(key, 0, i);
            }
            if (s != null && (!digit || i == 0 || !isDigit(key.charAt(i - 1)))) {
                s.append(digit ? '#' : c);
            }
        }
        return s == null ? key : s.toString();
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }
}
