package io.sluice.redis;

import java.util.Locale;

/**
 * How the Redis store runs its scripts ({@link RedisStore.Builder#scripting}).
 *
 * <ul>
 *   <li>{@link #FUNCTIONS}: as a Redis 7 functions library, loaded with {@code FUNCTION LOAD REPLACE} on every master
 *       when the store connects and called with {@code FCALL}. The library keeps the helpers and algorithm modules
 *       it has built between calls, so a decision costs Redis less CPU than under {@code EVALSHA}
 *       (docs/redis-script-protocol.md, "Functions or EVALSHA").</li>
 *   <li>{@link #EVAL}: as a script, loaded with {@code SCRIPT LOAD} and called with {@code EVALSHA}: for Redis 6, and
 *       for servers or ACL users that do not allow {@code FUNCTION} or {@code FCALL}.</li>
 *   <li>{@link #AUTO} (the default): functions where the server allows them, else the script. Decided once per store
 *       when it connects; a fallback to the script is logged at INFO.</li>
 * </ul>
 */
public enum Scripting {
    AUTO, FUNCTIONS, EVAL;

    /**
     * The value a setting spells {@code auto}, {@code functions} or {@code eval} (any case).
     *
     * @throws IllegalArgumentException naming {@code field} and the expected values otherwise
     */
    public static Scripting parse(String field, String text) {
        if (text != null) {
            for (Scripting s : values()) {
                if (s.name().equalsIgnoreCase(text.trim())) {
                    return s;
                }
            }
        }
        throw new IllegalArgumentException(field + " must be auto, functions or eval, was "
                + (text == null ? "null" : "'" + text + "'"));
    }

    /** The setting's spelling: {@code auto}, {@code functions} or {@code eval}. */
    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}
