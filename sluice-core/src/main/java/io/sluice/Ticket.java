package io.sluice;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;

/**
 * The receipt of an estimated charge ({@link RateLimiter#tryCharge}): which key was charged, how much, and the id
 * that makes its settlement idempotent. Pass it to {@link RateLimiter#settle} once the real cost is known.
 * Immutable; it holds no state of the store, so it may be serialized and settled from another process (the
 * store keeps what the settlement needs under the id, for the ticket's lifetime).
 *
 * <p>The id is chosen on the client side: the limiter draws it with {@link #newId()} (128 random bits); a caller
 * of {@link Store#charge} passes its own, unique per rule and key while the ticket lives.
 *
 * @param id       1 to 64 characters of {@code [A-Za-z0-9_-]}
 * @param key      the key charged
 * @param estimate the permits charged, at least 1
 */
public record Ticket(String id, String key, long estimate) {

    /** A ticket's lifetime unless the caller chooses one: long enough for a slow LLM call or download. */
    public static final Duration DEFAULT_LIFETIME = Duration.ofMinutes(10);
    /** The longest lifetime a ticket may have. */
    public static final Duration MAX_LIFETIME = Duration.ofDays(1);
    /** The shortest lifetime a ticket may have (Redis expires keys to the millisecond). */
    public static final Duration MIN_LIFETIME = Duration.ofMillis(1);
    static final int MAX_ID_LENGTH = 64;

    private static final SecureRandom RANDOM = new SecureRandom();

    /** @throws IllegalArgumentException naming the invalid field */
    public Ticket {
        checkId(id);
        Checks.key(key);
        if (estimate < 1 || estimate > Limit.MAX_COUNT) {
            throw new IllegalArgumentException("estimate must be in [1, " + Limit.MAX_COUNT + "], was " + estimate);
        }
    }

    /** A fresh random id: 128 bits as 32 lowercase hex digits. */
    public static String newId() {
        byte[] bytes = new byte[16];
        RANDOM.nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }

    /**
     * Checks a ticket id: 1 to 64 characters of {@code [A-Za-z0-9_-]} (safe in a Redis key, a URL and JSON).
     *
     * @throws IllegalArgumentException naming the field
     */
    public static String checkId(String id) {
        if (id == null || id.isEmpty() || id.length() > MAX_ID_LENGTH) {
            throw new IllegalArgumentException("ticket id must be 1 to " + MAX_ID_LENGTH
                    + " characters of [A-Za-z0-9_-], was " + (id == null ? "null" : id.length() + " characters"));
        }
        for (int i = 0; i < id.length(); i++) {
            char c = id.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'
                    || c == '-';
            if (!ok) {
                throw new IllegalArgumentException("ticket id must be 1 to " + MAX_ID_LENGTH
                        + " characters of [A-Za-z0-9_-], has '" + c + "' at index " + i);
            }
        }
        return id;
    }

    /**
     * Checks a ticket lifetime and returns it in microseconds: in [{@link #MIN_LIFETIME}, {@link #MAX_LIFETIME}].
     *
     * @throws IllegalArgumentException naming the field
     */
    public static long lifetimeMicros(Duration lifetime) {
        Checks.notNull(lifetime, "lifetime");
        if (lifetime.compareTo(MIN_LIFETIME) < 0 || lifetime.compareTo(MAX_LIFETIME) > 0) {
            throw new IllegalArgumentException("lifetime must be in [" + MIN_LIFETIME + ", " + MAX_LIFETIME + "], was "
                    + lifetime);
        }
        return lifetime.toNanos() / 1_000;
    }

    /**
     * Checks an actual cost for {@link RateLimiter#settle}: in [0, {@link Limit#MAX_COUNT}] (0: nothing was used,
     * refund it all).
     *
     * @throws IllegalArgumentException naming the field
     */
    public static long checkActual(long actual) {
        if (actual < 0 || actual > Limit.MAX_COUNT) {
            throw new IllegalArgumentException("actual must be in [0, " + Limit.MAX_COUNT + "], was " + actual);
        }
        return actual;
    }
}
