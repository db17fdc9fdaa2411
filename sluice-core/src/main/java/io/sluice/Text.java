package io.sluice;

/**
 * Whether a string is well-formed Unicode: every UTF-16 surrogate is one half of a pair. Keys, rule names and
 * limit names must be, because stores keep them as bytes: a Java string with an unpaired surrogate has no UTF-8
 * encoding, and encoders replace it (Lettuce, {@link String#getBytes}, with {@code '?'}), so "k" followed by U+D800,
 * "k" followed by U+DBFF, and "k?" would all become the bytes of "k?" and share one counter in Redis
 * while the in-memory store kept them apart. Refusing such text, rather than repairing it, keeps two distinct
 * accepted keys distinct in every store.
 */
public final class Text {

    private Text() {}

    /**
     * What is wrong with {@code text} as Unicode, or null when it is well-formed: {@code "must be well-formed
     * Unicode (found an unpaired surrogate U+D800 at index 1)"}.
     */
    public static String problem(CharSequence text) {
        int n = text.length();
        for (int i = 0; i < n; i++) {
            char c = text.charAt(i);
            // Fast path: nothing between U+D800 and U+DFFF, the surrogates.
            if ((c & 0xF800) != 0xD800) {
                continue;
            }
            if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(text.charAt(i + 1))) {
                i++;
                continue;
            }
            return "must be well-formed Unicode (found an unpaired surrogate U+"
                    + Integer.toHexString(c).toUpperCase(java.util.Locale.ROOT) + " at index " + i + ")";
        }
        return null;
    }

    /** Whether {@code text} is well-formed Unicode (see {@link #problem}). */
    public static boolean isWellFormed(CharSequence text) {
        return problem(text) == null;
    }
}
