package io.sluice.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.redis.StoredState;
import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.SharedRedis;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * lib/state_int.lua, a state stored as ONE decimal integer {@code <x><ddd>}, run in Redis's own Lua against its
 * Java twins in {@link StoredState}: the fingerprint's three digits, the text written and read back exactly up to
 * 2^53, and the values it refuses to read as one integer.
 */
@ExtendWith(SharedRedis.class)
class StateIntLibraryIT {

    private static final long TWO_53 = 1L << 53;

    private final String library = SluiceScript.get().library();
    private final Random random = new Random(20261126);

    private List<?> eval(String body, List<String> args) {
        List<String> command = new ArrayList<>(List.of("EVAL", library + body, "0"));
        command.addAll(args);
        return (List<?>) RedisServer.shared().call(command.toArray(new String[0]));
    }

    @Test
    void theFingerprintDigitsAreItsThirtySixBitsModuloAThousandAsJavaComputesThem() {
        List<String> fingerprints = new ArrayList<>(List.of("AAAAAA", "______", "------", "sCp3P_", "zz09az"));
        for (int i = 0; i < 2000; i++) {
            fingerprints.add(LimitParams.fingerprint("gcra", i + " 1000000 " + (i % 7 + 1)));
        }
        List<?> out = eval("""
                local out = {}
                for i = 1, #ARGV do out[i] = sluice.fp_digits(ARGV[i]) end
                return out
                """, fingerprints);
        for (int i = 0; i < fingerprints.size(); i++) {
            assertThat(out.get(i)).as(fingerprints.get(i)).isEqualTo(StoredState.fingerprintDigits(fingerprints.get(i)));
        }
        // 'A' is 65: 65 * (131^5 + 131^4 + 131^3 + 131^2 + 131 + 1) = 2,526,956,572,140
        assertThat(StoredState.fingerprintDigits("AAAAAA")).isEqualTo("140");
    }

    @Test
    void anIntegerUpToTwoToThe53IsWrittenInDecimalAndReadBackExactly() {
        List<Long> values = new ArrayList<>(List.of(1L, 9L, 10L, 999L, 1000L, 1_767_225_612_345_678L, TWO_53 - 1, TWO_53));
        for (int i = 0; i < 2000; i++) {
            values.add(1 + random.nextLong(TWO_53));
        }
        List<String> args = values.stream().map(v -> Long.toString(v)).toList();
        List<?> out = eval("""
                local out = {}
                for i = 1, #ARGV do
                  local value = sluice.encode_int(sluice.arg_int(ARGV[i]), "sCp3P_")
                  local x, stored = sluice.decode_int(value, "sCp3P_", nil, function(x) return x end)
                  out[#out + 1] = value
                  out[#out + 1] = sluice.fmt_int(x) .. " " .. stored
                end
                return out
                """, args);
        for (int i = 0; i < values.size(); i++) {
            long v = values.get(i);
            assertThat(out.get(2 * i)).as("encode_int(%d)", v).isEqualTo(StoredState.encodeInteger("sCp3P_", v));
            assertThat(Long.parseLong((String) out.get(2 * i))).as("below 2^63").isPositive();
            assertThat(out.get(2 * i + 1)).as("decode_int(encode_int(%d))", v).isEqualTo(v + " sCp3P_");
        }
    }

    @Test
    void onlyADecimalIntegerOfFourToNineteenDigitsWithoutLeadingZeroReadsAsOne() {
        String mine = StoredState.encodeInteger("sCp3P_", 9_007_199_254_740_992L);
        String other = mine.substring(0, 16) + (mine.endsWith("0") ? "001" : "000");
        List<String> values = List.of(mine, other, "0123", "123", "", "12a4", "-1000",
                "90071992547409920000", "sCp3P_|hefg8dts00|2", "1 000");
        List<?> out = eval("""
                local out = {}
                for i = 1, #ARGV do
                  local x, stored = sluice.decode_int(ARGV[i], "sCp3P_", nil, function(x) return x end)
                  out[i] = x == nil and "nil" or (sluice.fmt_int(x) .. " " .. stored)
                end
                return out
                """, values);
        assertThat(List.copyOf(out)).isEqualTo(List.of("9007199254740992 sCp3P_", "9007199254740992 "
                + other.substring(16), "nil", "nil", "nil", "nil", "nil", "nil", "nil", "nil"));
    }

    @Test
    void otherDigitsNameAKnownPreviousVersionWithThemOrNone() {
        String previous = "QEgDGC";
        String stranger = "AAAAAA";
        assertThat(StoredState.fingerprintDigits(previous)).isNotEqualTo(StoredState.fingerprintDigits(stranger));
        List<?> out = eval("""
                local known = { [ARGV[1]] = "words" }
                local V = sluice.stored_version
                return { V(sluice.fp_digits(ARGV[1]), known), V(sluice.fp_digits(ARGV[2]), known),
                         V(sluice.fp_digits(ARGV[1]), nil) }
                """, List.of(previous, stranger));
        assertThat(List.copyOf(out)).isEqualTo(List.of(previous, StoredState.fingerprintDigits(stranger),
                StoredState.fingerprintDigits(previous)));
    }
}
