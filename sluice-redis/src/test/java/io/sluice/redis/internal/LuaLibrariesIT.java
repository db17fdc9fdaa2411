package io.sluice.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.sluice.internal.algorithm.Arith;
import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.SharedRedis;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The Lua libraries' exact arithmetic (lib/arith*.lua, lib/state*.lua), run in Redis's own Lua against Java's {@link Arith} on shared vectors: the
 * helpers every algorithm port relies on to stay bit-identical with the Java transitions.
 */
@ExtendWith(SharedRedis.class)
class LuaLibrariesIT {

    private static final long TWO_52 = 1L << 52;
    private static final long TWO_53 = 1L << 53;

    private final String library = SluiceScript.get().library();
    private final Random random = new Random(20261122);

    /** Runs the libraries + body with ARGV = args in Redis; body returns a list of strings. */
    private List<?> eval(String body, List<String> args) {
        List<String> command = new ArrayList<>(List.of("EVAL", library + body, "0"));
        command.addAll(args);
        return (List<?>) RedisServer.shared().call(command.toArray(new String[0]));
    }

    private long anyUpTo(long max) {
        return switch (random.nextInt(4)) {
            case 0 -> random.nextLong(max + 1);
            case 1 -> random.nextLong(1_000_000);
            case 2 -> max - random.nextLong(1_000);
            default -> (long) Math.pow(2, random.nextDouble() * (Math.log(max) / Math.log(2)));
        };
    }

    @Test
    void mulDivIsExactBelowTwoToThe53AndSaturatesLikeJava() {
        List<long[]> vectors = new ArrayList<>(List.of(
                new long[] {TWO_53, TWO_53, 1}, new long[] {TWO_53, TWO_53, TWO_52}, new long[] {0, TWO_53, 7},
                new long[] {1_000_000_000_000L, 31_622_400_000_000L, 31_622_400_000_000L},
                new long[] {TWO_53 - 1, TWO_53 - 3, TWO_52 - 5}, new long[] {3, 5, 7},
                // quotients at 2^53 and just above it, where q + 1 rounds back to an even double
                new long[] {TWO_53, 1, 1}, new long[] {3, 3_002_399_751_580_331L, 1},
                new long[] {6, 3_002_399_751_580_331L, 2}, new long[] {5, 3_602_879_701_896_397L, 2},
                new long[] {TWO_53, 3, 3}, new long[] {TWO_53, 7, 7}, new long[] {TWO_53 - 1, 5, 3}));
        for (int i = 0; i < 3000; i++) {
            vectors.add(new long[] {anyUpTo(TWO_53), anyUpTo(TWO_53), 1 + anyUpTo(TWO_52 - 1)});
        }
        List<String> args = new ArrayList<>();
        for (long[] v : vectors) {
            args.add(Long.toString(v[0]));
            args.add(Long.toString(v[1]));
            args.add(Long.toString(v[2]));
        }
        List<?> out = eval("""
                local out = {}
                for i = 1, #ARGV, 3 do
                  local a, b, c = sluice.arg_int(ARGV[i]), sluice.arg_int(ARGV[i + 1]), sluice.arg_int(ARGV[i + 2])
                  out[#out + 1] = sluice.fmt_int(sluice.mul_div_floor(a, b, c))
                  out[#out + 1] = sluice.fmt_int(sluice.mul_div_ceil(a, b, c))
                end
                return out
                """, args);
        for (int i = 0; i < vectors.size(); i++) {
            long[] v = vectors.get(i);
            check("floor", v, Arith.mulDivFloor(v[0], v[1], v[2]), Long.parseLong((String) out.get(2 * i)));
            check("ceil", v, Arith.mulDivCeil(v[0], v[1], v[2]), Long.parseLong((String) out.get(2 * i + 1)));
        }
    }

    /** Exact up to 2^53; above it, above 2^53 too (so it compares right with every bound up to 2^53) and close. */
    private static void check(String what, long[] v, long java, long lua) {
        String as = what + "(" + v[0] + " * " + v[1] + " / " + v[2] + ")";
        if (java <= TWO_53) {
            assertThat(lua).as(as).isEqualTo(java);
        } else if (java == Long.MAX_VALUE) {
            assertThat(lua).as(as).isEqualTo(Long.MAX_VALUE);
        } else {
            assertThat(lua).as(as).isGreaterThan(TWO_53);
            assertThat((double) lua).as(as).isCloseTo((double) java, within(Math.abs(java) * 0x1p-49));
        }
    }

    @Test
    void saturatingAddAndMultiplyAreExactInTheClockAndNeverRoundOntoItsEnd() {
        List<long[]> adds = new ArrayList<>(List.of(new long[] {TWO_53, 1}, new long[] {TWO_53 - 1, 2},
                new long[] {TWO_53 - 1, 1}, new long[] {TWO_53, 0}, new long[] {TWO_53, -1}, new long[] {-TWO_53, -1},
                new long[] {-TWO_53 + 1, -2}, new long[] {TWO_53, TWO_53}, new long[] {0, 0},
                new long[] {Long.MAX_VALUE, 5}, new long[] {TWO_52, -TWO_53}));
        List<long[]> muls = new ArrayList<>(List.of(new long[] {TWO_52, 2}, new long[] {2, TWO_52},
                new long[] {1L << 26, 1L << 27}, new long[] {3, 3002399751580331L}, new long[] {3002399751580331L, 3},
                new long[] {TWO_53, TWO_53}, new long[] {0, Long.MAX_VALUE}, new long[] {Long.MAX_VALUE, 0},
                new long[] {Long.MAX_VALUE, 3}, new long[] {TWO_53, 1}, new long[] {1, TWO_53 - 1},
                new long[] {7, 1_286_742_750_677_284L}, new long[] {1_000_000_000_000L, 31_622_400_000_000L}));
        for (int i = 0; i < 3000; i++) {
            long a = anyUpTo(TWO_53);
            long b = anyUpTo(TWO_53);
            adds.add(new long[] {random.nextBoolean() ? a : -a, random.nextBoolean() ? b : -b});
            long c = anyUpTo(TWO_53);
            muls.add(new long[] {c, random.nextBoolean() ? anyUpTo(TWO_53) : anyUpTo(TWO_53 / Math.max(1, c) + 2)});
        }
        List<String> args = new ArrayList<>();
        for (long[] v : adds) {
            args.add("a");
            args.add(Long.toString(v[0]));
            args.add(Long.toString(v[1]));
        }
        for (long[] v : muls) {
            args.add("m");
            args.add(Long.toString(v[0]));
            args.add(Long.toString(v[1]));
        }
        List<?> out = eval("""
                local out = {}
                for i = 1, #ARGV, 3 do
                  local a, b = sluice.arg_int(ARGV[i + 1]), sluice.arg_int(ARGV[i + 2])
                  local r
                  if ARGV[i] == "a" then r = sluice.add_sat(a, b) else r = sluice.mul_sat(a, b) end
                  -- the sign and the side of +-2^53, then the value
                  local side = "in"
                  if r > 9007199254740992 then side = "above" elseif r < -9007199254740992 then side = "below" end
                  out[#out + 1] = side
                  if r == -math.huge then out[#out + 1] = "-9223372036854775808"
                  elseif r < 0 then out[#out + 1] = "-" .. sluice.fmt_int(-r)
                  else out[#out + 1] = sluice.fmt_int(r) end
                end
                return out
                """, args);
        List<long[]> all = new ArrayList<>(adds);
        all.addAll(muls);
        for (int i = 0; i < all.size(); i++) {
            long[] v = all.get(i);
            boolean add = i < adds.size();
            long java = add ? Arith.addSat(v[0], v[1]) : Arith.mulSat(v[0], v[1]);
            String as = (add ? "add_sat(" : "mul_sat(") + v[0] + ", " + v[1] + ") = " + java;
            String side = java > TWO_53 ? "above" : java < -TWO_53 ? "below" : "in";
            assertThat(out.get(2 * i)).as(as).isEqualTo(side);
            long lua = Long.parseLong((String) out.get(2 * i + 1));
            if (side.equals("in")) {
                assertThat(lua).as(as).isEqualTo(java);
            } else if (java == Long.MAX_VALUE || java == Long.MIN_VALUE) {
                assertThat(lua).as(as).isEqualTo(java);
            } else {
                assertThat((double) lua).as(as).isCloseTo((double) java, within(Math.abs(java) * 0x1p-49));
            }
        }
    }

    @Test
    void integerDivisionIsExactNearTwoToThe53() {
        List<long[]> vectors = new ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            long a = random.nextBoolean() ? TWO_53 - random.nextLong(1L << 40) : random.nextLong(TWO_53 + 1);
            if (random.nextInt(5) == 0) {
                a = -random.nextLong(1L << 52);
            }
            vectors.add(new long[] {a, 1 + anyUpTo(31_622_400_000_000L)});
        }
        vectors.add(new long[] {TWO_53, 3});
        vectors.add(new long[] {TWO_53 - 1, TWO_53 - 2});
        vectors.add(new long[] {TWO_53 - 1, 3});
        vectors.add(new long[] {-TWO_53, 7});
        List<String> args = new ArrayList<>();
        for (long[] v : vectors) {
            args.add(Long.toString(v[0]));
            args.add(Long.toString(v[1]));
        }
        List<?> out = eval("""
                local out = {}
                for i = 1, #ARGV, 2 do
                  local a, b = sluice.arg_int(ARGV[i]), sluice.arg_int(ARGV[i + 1])
                  out[#out + 1] = sluice.fmt_int(sluice.floor_div(a, b))
                  out[#out + 1] = sluice.fmt_int(sluice.floor_mod(a, b))
                  out[#out + 1] = sluice.fmt_int(sluice.ceil_div(a, b))
                  -- Lua's own operators, which lib/arith.lua's comment says are exact in this range.
                  out[#out + 1] = sluice.fmt_num(math.floor(a / b))
                  out[#out + 1] = sluice.fmt_num(a % b)
                end
                return out
                """, args);
        for (int i = 0; i < vectors.size(); i++) {
            long a = vectors.get(i)[0];
            long b = vectors.get(i)[1];
            String floor = Long.toString(Math.floorDiv(a, b));
            String mod = Long.toString(Math.floorMod(a, b));
            assertThat(out.get(5 * i)).as("floor_div(%d, %d)", a, b).isEqualTo(floor);
            assertThat(out.get(5 * i + 1)).as("floor_mod(%d, %d)", a, b).isEqualTo(mod);
            assertThat(out.get(5 * i + 2)).as("ceil_div(%d, %d)", a, b).isEqualTo(Long.toString(-Math.floorDiv(-a, b)));
            if (a >= 0) {
                assertThat(out.get(5 * i + 3)).as("math.floor(%d / %d)", a, b).isEqualTo(floor);
                assertThat(out.get(5 * i + 4)).as("%d %% %d", a, b).isEqualTo(mod);
            }
        }
    }

    @Test
    void numbersCrossTheBoundaryAsStringsWithoutLosingDigits() {
        List<String> ints = List.of("0", "1", "1767225600000001", "9007199254740992", "9223372036854775807",
                "-42");
        List<?> out = eval("""
                local out = {}
                for i = 1, #ARGV do out[i] = sluice.fmt_int(sluice.arg_int(ARGV[i])) end
                out[#out + 1] = tostring(sluice.arg_int("9223372036854775807") == math.huge)
                return out
                """, ints);
        assertThat(out.subList(0, ints.size())).isEqualTo(ints);
        assertThat(out.get(ints.size())).isEqualTo("true");

        List<String> doubles = new ArrayList<>();
        List<Double> values = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            double d = Double.longBitsToDouble(random.nextLong() & 0x7fefffffffffffffL);
            if (d != 0 && Double.isFinite(d)) {
                values.add(d);
                doubles.add(LimitParams.exactDouble(d));
            }
        }
        List<?> back = eval("""
                local out = {}
                for i = 1, #ARGV do out[i] = sluice.fmt_num(sluice.arg_num(ARGV[i])) end
                return out
                """, doubles);
        for (int i = 0; i < values.size(); i++) {
            assertThat(Double.parseDouble((String) back.get(i))).as(doubles.get(i)).isEqualTo(values.get(i));
        }
        assertThat(new BigInteger("9223372036854775807")).isEqualTo(BigInteger.valueOf(Long.MAX_VALUE));
    }

    @Test
    void statesStoreIntegersInBase36ExactlyAsJavaWritesThem() {
        List<Long> values = new ArrayList<>(List.of(0L, 1L, -1L, 35L, 36L, 1_767_225_600_000_000L, TWO_53, -TWO_53,
                TWO_53 - 1, 1_000_000L, -1_000_000L, 1L << 60, (1L << 62) + (1L << 10), Long.MAX_VALUE));
        for (int i = 0; i < 3000; i++) {
            long v = anyUpTo(TWO_53);
            values.add(random.nextInt(4) == 0 ? -v : v);
        }
        List<String> args = values.stream().map(v -> Long.toString(v)).toList();
        List<?> out = eval("""
                local out = {}
                for i = 1, #ARGV do
                  local x = sluice.arg_int(ARGV[i])
                  local s = sluice.fmt_b36(x)
                  out[#out + 1] = s
                  out[#out + 1] = sluice.fmt_int(sluice.arg_b36(s))
                end
                return out
                """, args);
        for (int i = 0; i < values.size(); i++) {
            long v = values.get(i);
            assertThat(out.get(2 * i)).as("fmt_b36(%d)", v).isEqualTo(Long.toString(v, 36));
            assertThat(out.get(2 * i + 1)).as("arg_b36(fmt_b36(%d))", v).isEqualTo(Long.toString(v));
        }
        List<?> errors = eval("""
                local out = {}
                for _, s in ipairs({ "", "-", "1.5", "A", "x!", "1 2" }) do
                  local ok, err = pcall(sluice.arg_b36, s)
                  out[#out + 1] = tostring(ok) .. " " .. tostring(err)
                end
                return out
                """, List.of());
        assertThat(errors).allSatisfy(e -> assertThat((String) e).startsWith("false ")
                .contains("expected a base-36 integer"));
    }

    @Test
    void statesStoreDoublesInTheShortestFormThatReadsBackBitForBit() {
        List<Double> values = new ArrayList<>(List.of(0.0, -0.0, 1.5, 0.1, 1.0 / 3, 1e300, 5e-324, 123456.789));
        for (int i = 0; i < 2000; i++) {
            double d = i % 2 == 0 ? Double.longBitsToDouble(random.nextLong() & 0x7fefffffffffffffL)
                    : random.nextDouble() * 1000;
            values.add(d);
        }
        List<String> args = values.stream().map(d -> d == 0 ? (1 / d < 0 ? "-0" : "0") : LimitParams.exactDouble(d))
                .toList();
        List<?> out = eval("""
                local out = {}
                for i = 1, #ARGV do out[i] = sluice.fmt_short(sluice.arg_num(ARGV[i])) end
                return out
                """, args);
        for (int i = 0; i < values.size(); i++) {
            String s = (String) out.get(i);
            assertThat(Double.doubleToRawLongBits(Double.parseDouble(s))).as(args.get(i) + " -> " + s)
                    .isEqualTo(Double.doubleToRawLongBits(values.get(i)));
        }
        assertThat(List.copyOf(out.subList(0, 4))).isEqualTo(List.of("0", "-0", "1.5", "0.1"));
    }

    @Test
    void aStateIsOneStringOfItsFieldsAfterTheFingerprint() {
        List<?> out = eval("""
                local fields = { { "windowStart", "int" }, { "stored", "num" }, { "log", "ints" }, { "empty", "ints" },
                                 { "tokens", "int" } }
                local state = { windowStart = 1767225600000000, stored = 0.5, log = { 1, 36, -2 }, empty = {},
                                tokens = -1000000 }
                local value = sluice.encode_state(state, fields, "sCp3P_")
                local back, fp = sluice.decode_state(value, fields)
                local short, fp2 = sluice.decode_state("sCp3P_|1", fields)
                return { value, fp, sluice.fmt_int(back.windowStart), sluice.fmt_num(back.stored),
                         table.concat({ back.log[1], back.log[2], back.log[3] }, ","), tostring(#back.empty),
                         sluice.fmt_int(back.tokens), tostring(short), fp2 }
                """, List.of());
        assertThat(List.copyOf(out)).isEqualTo(List.of("sCp3P_|hefg8dts00|0.5|1,10,-2||-lfls", "sCp3P_",
                "1767225600000000", "0.5", "1,36,-2", "0", "-1000000", "nil", "sCp3P_"));
    }

    @Test
    void integerStatesAreEncodedInOnePassAsFmtB36WritesEachField() {
        // encode_state writes states of integer fields below 2^53 in one pass into a scratch table it reuses; other
        // states (a field at or past 2^53, Long.MAX_VALUE, a double) take the field-by-field way. One call encodes
        // every vector in turn, long states after short ones and back, so stale codes in the scratch would show.
        List<long[]> vectors = new ArrayList<>(List.of(new long[] {0, 0, 0}, new long[] {-1, 35, 36},
                new long[] {TWO_53 - 1, -(TWO_53 - 1), 1}, new long[] {TWO_53, 1, 2}, new long[] {1, -TWO_53, 3},
                new long[] {Long.MAX_VALUE, 0, 1_767_225_600_000_000L}, new long[] {7, 8, 9}));
        for (int i = 0; i < 1000; i++) {
            long[] v = new long[3];
            for (int j = 0; j < 3; j++) {
                long x = anyUpTo(TWO_53 - 1);
                v[j] = random.nextInt(4) == 0 ? -x : x;
            }
            vectors.add(v);
        }
        List<String> args = new ArrayList<>();
        for (long[] v : vectors) {
            for (long x : v) {
                args.add(Long.toString(x));
            }
        }
        List<?> out = eval("""
                local fields = { { "tokens", "int" }, { "lastRefill", "int" }, { "roundingError", "int" } }
                local two = { { "allowAt", "int" }, { "burstOffset", "int" } }
                local out = {}
                for i = 1, #ARGV, 3 do
                  local a, b, c = sluice.arg_int(ARGV[i]), sluice.arg_int(ARGV[i + 1]), sluice.arg_int(ARGV[i + 2])
                  out[#out + 1] = sluice.encode_state({ tokens = a, lastRefill = b, roundingError = c }, fields, "sCp3P_")
                  out[#out + 1] = sluice.encode_state({ allowAt = c, burstOffset = a }, two, "eDnsKM")
                end
                return out
                """, args);
        for (int i = 0; i < vectors.size(); i++) {
            long[] v = vectors.get(i);
            assertThat(out.get(2 * i)).as("three fields %d %d %d", v[0], v[1], v[2]).isEqualTo("sCp3P_|"
                    + Long.toString(v[0], 36) + "|" + Long.toString(v[1], 36) + "|" + Long.toString(v[2], 36));
            assertThat(out.get(2 * i + 1)).as("two fields %d %d", v[2], v[0])
                    .isEqualTo("eDnsKM|" + Long.toString(v[2], 36) + "|" + Long.toString(v[0], 36));
        }
    }

    @Test
    void parametersAreParsedOncePerVersionAndAParsedVersionAnswersAsParsingAgain() {
        // sluice.params keeps alg.parse(words) by version where the helpers outlive the call (sluice.keeps: the
        // functions library), and past its bound starts again empty. Within one call marked so (FunctionLibraryIT
        // runs it across FCALLs): the same words give the same table without parsing again, and after 300 other
        // versions the first still parses to the same values. Unmarked (EVALSHA), it parses every time.
        List<?> unmarked = eval("""
                local parses = 0
                local alg = { parse = function(w) parses = parses + 1; return { first = w[1] } end }
                local p1 = sluice.params(alg, "3 1000000 epoch 0")
                local p2 = sluice.params(alg, "3 1000000 epoch 0")
                return { tostring(rawequal(p1, p2)), tostring(parses), p2.first }
                """, List.of());
        assertThat(List.copyOf(unmarked)).isEqualTo(List.of("false", "2", "3"));
        List<?> out = eval("""
                sluice.keeps = true
                local parses = 0
                local alg = { parse = function(w) parses = parses + 1; return { first = w[1], words = #w } end }
                local p1 = sluice.params(alg, "3 1000000 epoch 0")
                local p2 = sluice.params(alg, "3 1000000 epoch 0")
                local out = { tostring(rawequal(p1, p2)), tostring(parses), p1.first, tostring(p1.words) }
                for i = 1, 300 do sluice.params(alg, i .. " 1000000") end
                local p3 = sluice.params(alg, "3 1000000 epoch 0")
                out[#out + 1] = tostring(parses)
                out[#out + 1] = p3.first .. " " .. tostring(p3.words)
                out[#out + 1] = tostring(sluice.params(alg, "300 1000000").words)
                return out
                """, List.of());
        // 1 parse for the two first asks, 300 for the others, 1 more for the first version once the bound (256) has
        // emptied the table; "300 1000000" was parsed after the reset, so it is still there.
        assertThat(List.copyOf(out)).isEqualTo(List.of("true", "1", "3", "4", "302", "3 4", "2"));
    }

    @Test
    void theExpiryATokenBucketStepGivesIsExpiresAtOfTheStateItAdmits() {
        // token_bucket's step returns, after its verdict, the admitted state's expiry computed with its resetAfter
        // (lib/verdict.lua); the dispatcher stores it instead of calling M.expiresAt. Over seeded steps of each refill
        // style (with and without initial tokens below capacity, refund clocks set now and then), it must be exactly
        // M.expiresAt(admitted).
        long checked = 0;
        for (String words : List.of("5 1 1000000 greedy 5", "10 4 1000000 interval 10",
                "8 2 1000000 interval_aligned 3", "1000 7 3000000 greedy 1000", "3 1 86400000000 greedy 3")) {
            List<String> args = new ArrayList<>(List.of(words, "1767225600000000"));
            for (int i = 0; i < 300; i++) {
                args.add(Long.toString(random.nextInt(4) == 0 ? 0 : random.nextInt(900_000)));
                args.add(Integer.toString(random.nextInt(4)));
                args.add(random.nextInt(3) == 0 ? Long.toString(random.nextInt(5_000_000)) : "0");
                args.add(random.nextInt(10) == 0 ? Long.toString(1 + random.nextInt(3_000_000)) : "0");
            }
            List<?> out = eval(SluiceScript.get().part("algorithms/token_bucket.lua") + """
                    local alg = ALG["token_bucket"]
                    local p = sluice.params(alg, ARGV[1])
                    local st, now = nil, tonumber(ARGV[2])
                    local checked, bad = 0, {}
                    for j = 3, #ARGV, 4 do
                      now = now + tonumber(ARGV[j])
                      local refunded = tonumber(ARGV[j + 3])
                      if st ~= nil and refunded > 0 then
                        st = { tokens = st.tokens, lastRefill = st.lastRefill, roundingError = st.roundingError,
                               refunded = refunded }
                      end
                      local v, e = alg.step(st, now, tonumber(ARGV[j + 1]), tonumber(ARGV[j + 2]), p)
                      if e ~= nil then
                        local want = alg.expiresAt(v.admitted, p)
                        if e ~= want then
                          bad[#bad + 1] = sluice.fmt_int(e) .. " instead of " .. sluice.fmt_int(want)
                        end
                        checked = checked + 1
                      end
                      if v.allowed then st = v.admitted else st = v.rejected end
                    end
                    return { sluice.fmt_int(checked), table.concat(bad, ", ") }
                    """, args);
            assertThat(Long.parseLong((String) out.get(0))).as("admissions checked for %s", words).isPositive();
            checked += Long.parseLong((String) out.get(0));
            assertThat(out.get(1)).as("expiries that differ for %s", words).isEqualTo("");
        }
        assertThat(checked).as("admissions checked").isGreaterThan(500);
    }

    @Test
    void aKeptDecodedStateIsTheStateDecodingAgainGives() {
        // Where the helpers outlive the call (sluice.keeps), decode_state keeps the states of two or three integers
        // by fields and value: the same value gives the same table and fingerprint, with the values a fresh decode
        // (sluice.keeps false, as under EVALSHA) gives; past 256 values it starts again empty and still decodes right.
        List<?> out = eval("""
                local fields = { { "tokens", "int" }, { "lastRefill", "int" }, { "roundingError", "int" } }
                local value = "SBFUyk|lfln|hefg8lbguu|-52vc"
                local fresh, fresh_fp = sluice.decode_state(value, fields)
                local again = sluice.decode_state(value, fields)
                sluice.keeps = true
                local a, fa = sluice.decode_state(value, fields)
                local b, fb = sluice.decode_state(value, fields)
                for i = 1, 300 do sluice.decode_state("SBFUyk|" .. i .. "|1|2", fields) end
                local c, fc = sluice.decode_state(value, fields)
                return { tostring(rawequal(fresh, again)), tostring(rawequal(a, b)), fa, fb, fc, fresh_fp,
                         sluice.fmt_int(b.tokens), sluice.fmt_int(b.lastRefill), sluice.fmt_int(b.roundingError),
                         sluice.fmt_int(c.tokens), sluice.fmt_int(c.lastRefill), sluice.fmt_int(c.roundingError),
                         sluice.fmt_int(fresh.roundingError) }
                """, List.of());
        String tokens = Long.toString(Long.parseLong("lfln", 36));
        String lastRefill = Long.toString(Long.parseLong("hefg8lbguu", 36));
        String roundingError = Long.toString(Long.parseLong("-52vc", 36));
        assertThat(List.copyOf(out)).isEqualTo(List.of("false", "true", "SBFUyk", "SBFUyk", "SBFUyk", "SBFUyk",
                tokens, lastRefill, roundingError, tokens, lastRefill, roundingError, roundingError));
    }

    @Test
    void timePlusIsExactUpToTwoToThe53AndStaysAboveItPastThat() {
        long longest = 31_622_400_000_000L;
        List<long[]> vectors = new ArrayList<>(List.of(new long[] {TWO_53 - 1, 2}, new long[] {TWO_53 - 1, 1},
                new long[] {TWO_53, 0}, new long[] {TWO_53, 1}, new long[] {TWO_53, -1}, new long[] {TWO_53, -TWO_53},
                new long[] {TWO_53 - 3, 5}, new long[] {0, 0}, new long[] {0, TWO_53}, new long[] {1, TWO_53 - 1},
                new long[] {TWO_53, 2 * longest}, new long[] {TWO_53 - longest, longest + 1}));
        for (int i = 0; i < 3000; i++) {
            long t = random.nextBoolean() ? TWO_53 - random.nextLong(3 * longest) : random.nextLong(TWO_53 + 1);
            long d = switch (random.nextInt(3)) {
                case 0 -> random.nextLong(8);
                case 1 -> random.nextLong(2 * longest + 1);
                default -> -random.nextLong(t + 1); // concurrency adds a negative expiry offset to 2^53
            };
            vectors.add(new long[] {t, d});
        }
        List<String> args = new ArrayList<>();
        for (long[] v : vectors) {
            args.add(Long.toString(v[0]));
            args.add(Long.toString(v[1]));
        }
        List<?> out = eval("""
                local out = {}
                for i = 1, #ARGV, 2 do
                  out[#out + 1] = sluice.fmt_int(sluice.time_plus(sluice.arg_int(ARGV[i]), sluice.arg_int(ARGV[i + 1])))
                end
                return out
                """, args);
        for (int i = 0; i < vectors.size(); i++) {
            long t = vectors.get(i)[0];
            long d = vectors.get(i)[1];
            long lua = Long.parseLong((String) out.get(i));
            String as = "time_plus(" + t + ", " + d + ")";
            if (t + d <= TWO_53) {
                assertThat(lua).as(as).isEqualTo(t + d);
            } else {
                // Past 2^53 a double holds even integers only; what matters is that it stays past 2^53.
                assertThat(lua).as(as).isGreaterThan(TWO_53).isBetween(t + d - 1, t + d + 2);
            }
        }
    }
}
