package io.sluice.redis;

import java.util.Arrays;
import java.util.List;

/**
 * A state as the script stores it, for tests that look inside Redis: one string
 * {@code <fingerprint>|<field>|<field>...}, the fields in the order of the Lua module's {@code M.fields}, integers in
 * base 36 (docs/redis-script-protocol.md, "State storage"). For fixed_window: windowStart, count.
 */
public record StoredState(String fingerprint, List<String> fields) {

    /** The stored value of a GET, or null when the key does not exist. */
    public static StoredState parse(Object value) {
        if (value == null) {
            return null;
        }
        List<String> parts = Arrays.asList(((String) value).split("\\|", -1));
        return new StoredState(parts.get(0), List.copyOf(parts.subList(1, parts.size())));
    }

    /** The value the script stores for integer fields {@code fields} under {@code fingerprint}. */
    public static String encode(String fingerprint, long... fields) {
        StringBuilder out = new StringBuilder(fingerprint);
        for (long f : fields) {
            out.append('|').append(Long.toString(f, 36));
        }
        return out.toString();
    }

    /** The integer field at {@code index} (0-based, in M.fields order). */
    public long integer(int index) {
        return Long.parseLong(fields.get(index), 36);
    }

    /** A fixed_window state's count. */
    public long count() {
        return integer(1);
    }

    /** A fixed_window state's windowStart. */
    public long windowStart() {
        return integer(0);
    }
}
