package io.sluice;

/**
 * One entry of a {@link Tier}'s keys: an exact key, or a glob in which {@code *} stands for any run of
 * characters (none included). {@code \*} is a literal star and {@code \\} a literal backslash; a backslash
 * before anything else is refused, so a pattern means one thing. Matching compares UTF-16 chars, as keys are
 * compared everywhere else. Immutable.
 */
final class KeyPattern {

    private final String text;
    /** The literal runs between stars, unescaped; one run for an exact key. */
    private final String[] parts;
    private final boolean glob;

    private KeyPattern(String text, String[] parts, boolean glob) {
        this.text = text;
        this.parts = parts;
        this.glob = glob;
    }

    /**
     * Parses one pattern; {@code field} names it in errors.
     *
     * @throws IllegalArgumentException for an empty or ill-formed pattern, a dangling or unknown escape, or a
     *                                  pattern no valid key can match (longer than a key may be)
     */
    static KeyPattern parse(String text, String field) {
        if (text == null || text.isEmpty()) {
            throw new IllegalArgumentException(field + " must be a non-empty key or pattern");
        }
        Checks.wellFormed(text, field);
        java.util.List<String> runs = new java.util.ArrayList<>();
        StringBuilder run = new StringBuilder();
        boolean glob = false;
        int literal = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '\\') {
                if (i + 1 >= text.length() || (text.charAt(i + 1) != '*' && text.charAt(i + 1) != '\\')) {
                    throw new IllegalArgumentException(field + " '" + text + "' has a backslash at index " + i
                            + " that escapes neither '*' nor '\\' (write \\* for a literal star, \\\\ for a backslash)");
                }
                run.append(text.charAt(++i));
                literal++;
            } else if (c == '*') {
                glob = true;
                runs.add(run.toString());
                run.setLength(0);
            } else {
                run.append(c);
                literal++;
            }
        }
        runs.add(run.toString());
        if (literal > Checks.MAX_KEY_LENGTH) {
            throw new IllegalArgumentException(field + " '" + abbreviated(text) + "' can never match: every key it"
                    + " matches would be longer than " + Checks.MAX_KEY_LENGTH + " characters, the longest key");
        }
        return new KeyPattern(text, runs.toArray(String[]::new), glob);
    }

    /** The pattern as written. */
    String text() {
        return text;
    }

    /** Whether the pattern holds a star; otherwise it matches one key, {@link #exactKey()}. */
    boolean isGlob() {
        return glob;
    }

    /** The one key an exact pattern matches (escapes removed). */
    String exactKey() {
        return parts[0];
    }

    /** Whether the pattern is {@code *} alone (or only stars): it matches every key. */
    boolean matchesEverything() {
        for (String p : parts) {
            if (!p.isEmpty()) {
                return false;
            }
        }
        return true;
    }

    /**
     * Whether {@code key} matches. Greedy left to right: the first run must start the key, the last must end it,
     * and each run between takes its earliest occurrence, which leaves the most room for the rest; so the
     * cost is linear in the key's length times the runs', and a key of at most 512 chars bounds it.
     */
    boolean matches(String key) {
        if (!glob) {
            return parts[0].equals(key);
        }
        String first = parts[0];
        String last = parts[parts.length - 1];
        if (key.length() < first.length() + last.length() || !key.startsWith(first) || !key.endsWith(last)) {
            return false;
        }
        int at = first.length();
        int end = key.length() - last.length();
        for (int i = 1; i < parts.length - 1; i++) {
            int found = key.indexOf(parts[i], at);
            if (found < 0 || found + parts[i].length() > end) {
                return false;
            }
            at = found + parts[i].length();
        }
        return true;
    }

    private static String abbreviated(String s) {
        return s.length() <= 40 ? s : s.substring(0, 40) + "...";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof KeyPattern p && p.text.equals(text);
    }

    @Override
    public int hashCode() {
        return text.hashCode();
    }

    @Override
    public String toString() {
        return text;
    }
}
