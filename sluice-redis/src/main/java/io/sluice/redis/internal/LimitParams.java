package io.sluice.redis.internal;

import io.sluice.Limit;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.RecordComponent;
import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Locale;

/**
 * A limit's parameters as the words the Lua port parses: the components of its record, in declaration order,
 * without the name. Generic on purpose: porting an algorithm needs no Java change, and the parameter layout of
 * each algorithm is its record, which the Java transition reads too.
 *
 * <table>
 *   <caption>Words by component type</caption>
 *   <tr><td>long</td><td>decimal integer</td><td>{@code 3}</td></tr>
 *   <tr><td>Duration</td><td>whole microseconds</td><td>{@code 1000000}</td></tr>
 *   <tr><td>double</td><td>the digits of C's {@code %.17g}: reads back as the same double</td>
 *       <td>{@code 0.10000000000000001}</td></tr>
 *   <tr><td>boolean</td><td>{@code 1} or {@code 0}</td><td>{@code 0}</td></tr>
 *   <tr><td>enum</td><td>constant name in lower case</td><td>{@code epoch}</td></tr>
 *   <tr><td>ZoneId</td><td>its id</td><td>{@code Europe/Berlin}</td></tr>
 * </table>
 */
public final class LimitParams {

    private static final MathContext SEVENTEEN_DIGITS = new MathContext(17, RoundingMode.HALF_EVEN);

    private LimitParams() {}

    /** Characters of a {@link #fingerprint}: 6 base64url characters are its first 36 bits. */
    public static final int FINGERPRINT_LENGTH = 6;

    /** The parameter words of {@code limit}, space-separated. */
    public static String encode(Limit limit) {
        return String.join(" ", words(limit));
    }

    /** The parameter words of {@code limit}. */
    public static List<String> words(Limit limit) {
        Class<?> type = limit.getClass();
        if (!type.isRecord()) {
            throw new IllegalArgumentException("limit must be one of Sluice's limit records, was " + type.getName());
        }
        List<String> out = new ArrayList<>();
        for (RecordComponent c : type.getRecordComponents()) {
            if (c.getName().equals("name")) {
                continue;
            }
            out.add(word(c.getName(), value(limit, c)));
        }
        return out;
    }

    private static Object value(Limit limit, RecordComponent c) {
        try {
            return c.getAccessor().invoke(limit);
        } catch (IllegalAccessException | InvocationTargetException e) {
            throw new IllegalStateException("cannot read " + c.getName() + " of " + limit, e);
        }
    }

    /**
     * The short fingerprint a state is stored under: the first 36 bits of SHA-256 of
     * {@code "<algorithm> <words>"} (UTF-8) as 6 base64url characters, e.g. {@code "sCp3P_"} for
     * {@code "fixed_window 3 1000000 epoch 0"}. Two different versions of a limit share one with probability
     * 2^-36 (about 1 in 69 billion); the script then misreads the state instead of migrating or dropping it.
     */
    public static String fingerprint(String algorithm, String words) {
        byte[] digest;
        try {
            digest = MessageDigest.getInstance("SHA-256")
                    .digest((algorithm + " " + words).getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JVM has no SHA-256", e);
        }
        // 6 bytes make 8 base64 characters; the first 6 characters are the first 36 bits.
        return Base64.getUrlEncoder().withoutPadding().encodeToString(Arrays.copyOf(digest, 6))
                .substring(0, FINGERPRINT_LENGTH);
    }

    static String word(String field, Object value) {
        if (value instanceof Long || value instanceof Integer) {
            return value.toString();
        }
        if (value instanceof Duration d) {
            return Long.toString(d.toNanos() / 1_000);
        }
        if (value instanceof Double d) {
            return exactDouble(d);
        }
        if (value instanceof Boolean b) {
            return b ? "1" : "0";
        }
        if (value instanceof Enum<?> e) {
            return e.name().toLowerCase(Locale.ROOT);
        }
        if (value instanceof java.time.ZoneId z) {
            // Zone ids hold no spaces (e.g. Europe/Berlin, UTC, +05:30); the script only compares them.
            return z.getId();
        }
        throw new IllegalStateException("no Redis encoding for " + field + " of type "
                + (value == null ? "null" : value.getClass().getName()));
    }

    /**
     * The double's exact binary value rounded to 17 significant digits (the digits C's {@code %.17g} prints): enough for
     * Lua's {@code tonumber} to read back the very same double.
     */
    static String exactDouble(double d) {
        if (Double.isNaN(d) || Double.isInfinite(d)) {
            throw new IllegalStateException("parameters are finite, was " + d);
        }
        if (d == 0) {
            return "0";
        }
        return new BigDecimal(d).round(SEVENTEEN_DIGITS).stripTrailingZeros().toString();
    }
}
