package io.sluice.redis;

import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A state as the script stores it, for tests that look inside Redis (docs/redis-script-protocol.md, "State
 * storage"): one string {@code <fingerprint>|<field>|<field>...}, the fields in the order of the Lua module's
 * {@code M.fields}, integers in base 36; or, for a state of one integer (gcra's TAT, lib/state_int.lua), the
 * decimal integer {@code <x><ddd>}, {@code ddd} the three {@link #fingerprintDigits fingerprint digits}: then
 * {@link #fingerprint} is those digits and the one field is x, written here in base 36 like the others so
 * {@link #integer} reads both forms. For fixed_window: windowStart, count.
 */
public record StoredState(String fingerprint, List<String> fields) {

    private static final Pattern ONE_INTEGER = Pattern.compile("([1-9][0-9]*)([0-9]{3})");

    /** The stored value of a GET, or null when the key does not exist. */
    public static StoredState parse(Object value) {
        if (value == null) {
            return null;
        }
        Matcher one = ONE_INTEGER.matcher((String) value);
        if (one.matches()) {
            return new StoredState(one.group(2), List.of(Long.toString(Long.parseLong(one.group(1)), 36)));
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

    /** The value the script stores for a state of one integer {@code x} (1 to 2^53) under {@code fingerprint}. */
    public static String encodeInteger(String fingerprint, long x) {
        return x + fingerprintDigits(fingerprint);
    }

    /**
     * The Java twin of {@code sluice.fp_digits} (lib/state_int.lua): the 6 character codes of a fingerprint
     * ({@code LimitParams.fingerprint}) read as the digits of a base-131 number, modulo 1000, as three decimal
     * digits.
     */
    public static String fingerprintDigits(String fingerprint) {
        long v = 0;
        for (int i = 0; i < 6; i++) {
            v = v * 131 + fingerprint.charAt(i);
        }
        return String.format("%03d", v % 1000);
    }

    /** Whether the value was a state of one integer (then {@link #fingerprint} holds its three digits). */
    public boolean oneInteger() {
        return fingerprint.length() == 3 && fingerprint.chars().allMatch(Character::isDigit);
    }

    /** The integer field at {@code index} (0-based, in M.fields order; 0 for a state of one integer). */
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
