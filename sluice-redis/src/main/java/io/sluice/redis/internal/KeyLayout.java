package io.sluice.redis.internal;

import io.lettuce.core.cluster.SlotHash;
import java.nio.charset.StandardCharsets;

/**
 * The Redis key of every piece of state, and the hash-tag convention that keeps a rule's keys in one Cluster
 * slot.
 *
 * <pre>
 *   state of a limit     &lt;prefix&gt;:{&lt;rule&gt;:&lt;key&gt;}:&lt;limit&gt;       e.g. sluice:{api:user:42}:per_second
 *   ... key with a tag   &lt;prefix&gt;:&lt;rule&gt;:&lt;key&gt;:&lt;limit&gt;         e.g. sluice:api:{user:42}:ip:per_second
 *   lockout of a rule    &lt;prefix&gt;:{&lt;rule&gt;:&lt;key&gt;}:%lockout       e.g. sluice:{login:user:42}:%lockout
 *   request id           &lt;prefix&gt;:{&lt;tag&gt;}:r:&lt;id&gt;               e.g. sluice:{api:user:42}:r:Xf3...:1c
 * </pre>
 *
 * Redis hashes only the text between the first '{' and the next '}' when it is non-empty (the hash tag). The
 * user's key goes inside our braces, so every limit of one rule on one key shares a slot and a script may
 * touch them all, on Cluster too. When the user's key has its own non-empty tag ({@code "{user:42}:ip"},
 * found by Redis's rule) we leave the braces out and that tag decides the slot: keys sharing a tag share a slot
 * across rules, so one script can decide them together. The request-id key of a call copies the tag of the
 * call's first state key, so it lands in the same slot.
 *
 * <p>The layout is injective: rule and limit names are percent-encoded for '%', ':', '{' and '}' (rarely
 * present; readable otherwise), the prefix holds no braces, and the user's key, which may hold anything, sits
 * between the only separators that can be told apart (the rule ends at the first ':' after the prefix, the
 * limit starts after the last ':'). So two different (rule, key, limit) never share a Redis key.
 */
public final class KeyLayout {

    private final String prefix;

    public KeyLayout(String prefix) {
        this.prefix = StoreSettings.checkPrefix(prefix);
    }

    public String prefix() {
        return prefix;
    }

    /** The part every state key of {@code rule} on {@code key} starts with, up to the limit name. */
    public String base(String rule, String key) {
        String r = escape(rule);
        return hashTag(key) != null ? prefix + ":" + r + ":" + key : prefix + ":{" + r + ":" + key + "}";
    }

    /** The key holding the state of {@code limit} of {@code rule} on {@code key}. */
    public String stateKey(String rule, String key, String limit) {
        return base(rule, key) + ":" + escape(limit);
    }

    /**
     * The key holding the lockout state of {@code rule} on {@code key}: the limits' base and {@code %lockout},
     * which no escaped limit name spells (an escaped name's '%' is followed by a hex code), in their slot.
     */
    public String lockoutKey(String rule, String key) {
        return base(rule, key) + ":%lockout";
    }

    /** The key remembering the reply of request {@code id}, in the slot of {@code stateKey}. */
    public String requestKey(String stateKey, String id) {
        return prefix + ":{" + hashTag(stateKey) + "}:r:" + id;
    }

    /** The key of ticket {@code id} of the rule and key of {@code stateKey}, in its hash slot (settle.lua). */
    public String ticketKey(String stateKey, String id) {
        return prefix + ":{" + hashTag(stateKey) + "}:t:" + id;
    }

    /**
     * The hash tag Redis Cluster hashes for {@code redisKey}: the text between the first '{' and the next '}',
     * or null when there is none or it is empty (then the whole key is hashed).
     */
    public static String hashTag(String redisKey) {
        int open = redisKey.indexOf('{');
        if (open < 0) {
            return null;
        }
        int close = redisKey.indexOf('}', open + 1);
        if (close <= open + 1) {
            return null;
        }
        return redisKey.substring(open + 1, close);
    }

    /** The Cluster slot of a Redis key, hashing its UTF-8 bytes as Redis does. */
    public static int slot(String redisKey) {
        return SlotHash.getSlot(redisKey.getBytes(StandardCharsets.UTF_8));
    }

    /** Percent-encodes the characters that would make the layout ambiguous or move the hash tag. */
    static String escape(String name) {
        StringBuilder out = null;
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            String code = switch (c) {
                case '%' -> "%25";
                case ':' -> "%3A";
                case '{' -> "%7B";
                case '}' -> "%7D";
                default -> null;
            };
            if (code != null && out == null) {
                out = new StringBuilder(name.length() + 8).append(name, 0, i);
            }
            if (out != null) {
                if (code != null) {
                    out.append(code);
                } else {
                    out.append(c);
                }
            }
        }
        return out == null ? name : out.toString();
    }
}
