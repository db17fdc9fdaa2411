package io.sluice.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Limit;
import io.sluice.RefreshPeriod;
import io.sluice.SmoothBursty;
import io.sluice.SmoothWarmingUp;
import io.sluice.internal.algorithm.Algorithm;
import io.sluice.internal.algorithm.Algorithms;
import io.sluice.internal.algorithm.Arith;
import io.sluice.internal.algorithm.Step;
import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.SharedRedis;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.RecordComponent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The Lua modules against the Java transitions they port, one transition at a time: random parameters and
 * random states (also ones no request sequence reaches easily: stored permits a few ulps off their bound,
 * tickets at the end of the clock, deep debts, now at 0 and at 2^53) go through step, grantable, expiresAt and
 * migrate on both sides, and every answer and every resulting state must be equal, doubles bit for bit. The
 * derived parameters (Guava's stable interval, maxPermits, threshold and slope) must be Java's too.
 *
 * <p>Answers Java gives beyond 2^53 (an expiry or a reset past the end of the clock) cannot be exact in a
 * double; there the Lua answer must lie on the same side of MAX_TIME (expiry) or be within one microsecond
 * (smooth reset, only before 1971).
 */
@ExtendWith(SharedRedis.class)
class TransitionPortsIT {

    private static final long MAX_TIME = Arith.MAX_TIME;
    private static final int VECTORS = 4_000;
    private static final int PER_CALL = 250;

    private final Random random = new Random(Long.getLong("sluice.seed", 20261122L));

    /** One call: the libraries, the module's files, then a body that runs vectors (see below). */
    private static final String BODY = """
            local M = ALG[ARGV[1]]
            local p = M.parse(sluice.words(ARGV[2]))
            local function decode(s)
              if s == "-" then return nil end
              local words, state = {}, {}
              for w in string.gmatch(s, "[^,]+") do words[#words + 1] = w end
              for i, f in ipairs(M.fields) do
                if f[2] == "num" then state[f[1]] = sluice.arg_num(words[i])
                else state[f[1]] = sluice.arg_int(words[i]) end
              end
              return state
            end
            local function encode(state, input)
              if state == input then return "same" end
              if state == nil then return "-" end
              local out = {}
              for i, f in ipairs(M.fields) do
                if f[2] == "num" then out[i] = sluice.fmt_num(state[f[1]]) else out[i] = sluice.fmt_int(state[f[1]]) end
              end
              return table.concat(out, ",")
            end
            local function int(x)
              if x < 0 then return "-" .. sluice.fmt_int(-x) end
              return sluice.fmt_int(x)
            end
            if ARGV[3] == "params" then
              local out = {}
              for i = 4, #ARGV do out[#out + 1] = sluice.fmt_num(p[ARGV[i]]) end
              return out
            end
            local previous = nil
            if ARGV[3] ~= "" then previous = M.parse(sluice.words(ARGV[3])) end
            local out = {}
            for i = 4, #ARGV, 6 do
              local state, old = decode(ARGV[i]), decode(ARGV[i + 5])
              local now, permits = sluice.arg_int(ARGV[i + 1]), sluice.arg_int(ARGV[i + 2])
              local maxWait, grantPermits = sluice.arg_int(ARGV[i + 3]), sluice.arg_int(ARGV[i + 4])
              local s = M.step(state, now, permits, maxWait, p)
              out[#out + 1] = table.concat({ tostring(s.allowed), int(s.waitMicros), int(s.remaining),
                int(s.retryAfterMicros), int(s.resetAfterMicros), encode(s.admitted, state), encode(s.rejected, state),
                int(M.grantable(state, now, grantPermits, p)) }, " ")
              if state ~= nil then out[#out + 1] = int(M.expiresAt(state, p)) else out[#out + 1] = "-" end
              if previous ~= nil and old ~= nil then
                out[#out + 1] = encode(M.migrate(old, previous, now, p), old)
              else
                out[#out + 1] = "-"
              end
            end
            return out
            """;

    /** One algorithm under test: how to draw its limits and plausible (and extreme) states for them. */
    private record Case(String name, List<String> files, Function<Random, Limit> limits,
                        BiFunction<Random, Limit, Object[]> states, List<String> derived) {}

    @Test
    void smoothBursty() {
        run(new Case("smooth_bursty", List.of("algorithms/smooth_bursty.lua"), TransitionPortsIT::bursty,
                this::smoothState, List.of("stableIntervalMicros", "maxPermits")));
    }

    @Test
    void smoothWarmingUp() {
        run(new Case("smooth_warming_up", List.of("algorithms/smooth_bursty.lua", "algorithms/smooth_warming_up.lua"),
                TransitionPortsIT::warmingUp, this::smoothState,
                List.of("stableIntervalMicros", "maxPermits", "thresholdPermits", "slope")));
    }

    @Test
    void refreshPeriod() {
        run(new Case("refresh_period", List.of("algorithms/refresh_period.lua"), TransitionPortsIT::refresh,
                this::refreshState, List.of()));
    }

    // ------------------------------------------------------------------------------------------ parameters

    private static final double[] RATES = {1.0 / 31_622_400, 1.0 / 3, 0.5, 1.0, 2.0, 3.0, 5.0, 7.3, 0.1, 100.0,
            1_000_000.0, 999_999.9999999999, 2.0 / 31_622_400};

    private static double rate(Random r) {
        return switch (r.nextInt(3)) {
            case 0 -> 0.05 + 20 * r.nextDouble();
            case 1 -> Math.exp(Math.log(1.0 / 31_622_400) + r.nextDouble() * Math.log(1_000_000.0 * 31_622_400));
            default -> RATES[r.nextInt(RATES.length)];
        };
    }

    private static Limit bursty(Random r) {
        double[] bursts = {0.0, 1.0, 1.0 / 3, 0.25, 2.7, 60.0, 31_622_400.0, 5 * r.nextDouble(),
                31_622_400.0 * r.nextDouble()};
        return new SmoothBursty("b", rate(r), bursts[r.nextInt(bursts.length)]);
    }

    private static Limit warmingUp(Random r) {
        long[] warmups = {1, 7, 1_000, 250_000, 1_000_000, 4_000_000, 60_000_000, 31_622_400_000_000L,
                1 + r.nextInt(10_000_000), 1 + (long) (r.nextDouble() * 31_622_400_000_000L)};
        double[] coldFactors = {1.0, 3.0, 2.5, 1000.0, 1 + 9 * r.nextDouble(), 1 + 999 * r.nextDouble()};
        return new SmoothWarmingUp("w", rate(r), Duration.ofNanos(1_000 * warmups[r.nextInt(warmups.length)]),
                coldFactors[r.nextInt(coldFactors.length)]);
    }

    private static Limit refresh(Random r) {
        long[] limits = {1, 2, 3, 7, 10, 1_000, Limit.MAX_COUNT, Limit.MAX_COUNT - 1, 1 + r.nextInt(100),
                1 + (long) (r.nextDouble() * Limit.MAX_COUNT)};
        long[] periods = {1, 7, 1_000, 250_000, 1_000_000, 60_000_000, 31_622_400_000_000L, 1 + r.nextInt(5_000_000),
                1 + (long) (r.nextDouble() * 31_622_400_000_000L)};
        return new RefreshPeriod("r", limits[r.nextInt(limits.length)],
                Duration.ofNanos(1_000 * periods[r.nextInt(periods.length)]),
                Duration.ofNanos(1_000 * (long) r.nextInt(10_000_000)));
    }

    // ------------------------------------------------------------------------------------------ states

    private long time(Random r) {
        return switch (r.nextInt(6)) {
            case 0 -> 0;
            case 1 -> MAX_TIME - r.nextInt(3);
            case 2 -> r.nextInt(100_000_000);
            case 3 -> MAX_TIME - (long) (r.nextDouble() * 100_000_000_000_000L);
            default -> 1_767_225_600_000_000L + (long) (r.nextDouble() * 1e12);
        };
    }

    /** Components (storedPermits, nextFreeTicketMicros) around now, as resync and reserve leave them. */
    private Object[] smoothState(Random r, Limit limit) {
        double max = (Double) field(Algorithms.of(limit), "maxPermits");
        double stored = switch (r.nextInt(8)) {
            case 0 -> 0.0;
            case 1 -> max;
            case 2 -> Math.nextDown(max);
            case 3 -> Math.nextUp(max) + (r.nextBoolean() ? 0 : Math.ulp(max)); // a rescale's few ulps above
            case 4 -> Math.floor(max * r.nextDouble());
            default -> max * r.nextDouble();
        };
        return new Object[] {Math.max(0.0, stored), time(r)};
    }

    /** Components (origin, activeCycle, activePermissions) that keep every cycle start within the clock. */
    private Object[] refreshState(Random r, Limit limit) {
        RefreshPeriod rp = (RefreshPeriod) limit;
        long period = rp.refreshPeriod().toNanos() / 1_000;
        long origin = time(r);
        long cycles = (MAX_TIME - origin) / period;
        long cycle = switch (r.nextInt(4)) {
            case 0 -> 0;
            case 1 -> cycles;
            default -> (long) (r.nextDouble() * Math.min(cycles, r.nextBoolean() ? 10 : cycles));
        };
        long l = rp.limitForPeriod();
        long permits = switch (r.nextInt(7)) {
            case 0 -> l;
            case 1 -> 0;
            case 2 -> -(1L << 52) + r.nextInt(3);
            case 3 -> -(long) (r.nextDouble() * Math.min(1L << 52, 1_000L * l));
            case 4 -> l + 1 + r.nextInt(1_000); // above a lowered limit
            default -> (long) (r.nextDouble() * l);
        };
        return new Object[] {origin, cycle, permits};
    }

    // ------------------------------------------------------------------------------------------ the run

    private void run(Case c) {
        String source = SluiceScript.get().library() + "\n"
                + String.join("\n", c.files().stream().map(f -> SluiceScript.get().part(f)).toList()) + "\n" + BODY;
        for (int done = 0; done < VECTORS; done += PER_CALL) {
            Limit limit = c.limits().apply(random);
            Limit previous = random.nextInt(4) == 0 ? null : c.limits().apply(random);
            Algorithm<Object> java = Algorithms.of(limit);
            checkDerived(source, c, limit, java);
            Class<?> stateType = java.step(null, 0, 1, 0).admitted().getClass();
            List<Object> states = new ArrayList<>();
            List<Object> olds = new ArrayList<>();
            List<long[]> requests = new ArrayList<>();
            List<String> args = new ArrayList<>(List.of("EVAL", source, "0", c.name(), LimitParams.encode(limit),
                    previous == null ? "" : LimitParams.encode(previous)));
            for (int i = 0; i < PER_CALL; i++) {
                Object state = random.nextInt(8) == 0 ? null : newState(stateType, c.states().apply(random, limit));
                // a state written under the previous parameters, for migrate
                Object old = previous == null ? null : newState(stateType, c.states().apply(random, previous));
                long now = random.nextInt(3) == 0 ? time(random) : near(state, random);
                long permits = switch (random.nextInt(6)) {
                    case 0 -> 0;
                    case 1 -> Limit.MAX_COUNT;
                    case 2 -> 1 + (long) (random.nextDouble() * Limit.MAX_COUNT);
                    default -> 1 + random.nextInt(20);
                };
                long maxWait = switch (random.nextInt(6)) {
                    case 0 -> Long.MAX_VALUE;
                    case 1 -> (long) (random.nextDouble() * 1e18);
                    case 2 -> random.nextInt(5_000_000);
                    default -> 0;
                };
                long grant = random.nextBoolean() ? permits : (long) (random.nextDouble() * Limit.MAX_COUNT);
                states.add(state);
                olds.add(old);
                requests.add(new long[] {now, permits, maxWait, grant});
                args.addAll(List.of(encode(state), Long.toString(now), Long.toString(permits), Long.toString(maxWait),
                        Long.toString(grant), encode(old)));
            }
            List<?> out = (List<?>) RedisServer.shared().call(args.toArray(new String[0]));
            for (int i = 0; i < PER_CALL; i++) {
                compare(c, java, limit, previous, states.get(i), olds.get(i), requests.get(i), out, 3 * i);
            }
        }
    }

    private long near(Object state, Random r) {
        if (state == null) {
            return time(r);
        }
        long t = (Long) component(state, state instanceof Record rec && rec.getClass().getRecordComponents().length == 3
                ? "origin" : "nextFreeTicketMicros");
        long delta = switch (r.nextInt(4)) {
            case 0 -> r.nextInt(3) - 1;
            case 1 -> r.nextInt(2_000_000) - 1_000_000;
            default -> (long) (r.nextDouble() * 1e11);
        };
        return Math.max(0, Math.min(MAX_TIME, t + delta));
    }

    private void compare(Case c, Algorithm<Object> java, Limit limit, Limit previous, Object state, Object old,
                         long[] q, List<?> out, int at) {
        long now = q[0];
        String as = c.name() + " " + LimitParams.encode(limit) + (previous == null ? "" : " from "
                + LimitParams.encode(previous)) + ", state " + state + ", now " + now + ", permits " + q[1]
                + ", maxWait " + q[2] + ", grantable(" + q[3] + ")";
        Step<Object> step = java.step(state, now, q[1], q[2]);
        String[] lua = ((String) out.get(at)).split(" ");
        assertThat(lua[0]).as(as + ": allowed").isEqualTo(Boolean.toString(step.allowed()));
        assertThat(Long.parseLong(lua[1])).as(as + ": wait").isEqualTo(step.waitMicros());
        assertThat(Long.parseLong(lua[2])).as(as + ": remaining").isEqualTo(step.remaining());
        assertThat(Long.parseLong(lua[3])).as(as + ": retryAfter").isEqualTo(step.retryAfterMicros());
        long reset = Long.parseLong(lua[4]);
        if (step.resetAfterMicros() <= MAX_TIME || step.resetAfterMicros() == Long.MAX_VALUE) {
            assertThat(reset).as(as + ": resetAfter").isEqualTo(step.resetAfterMicros());
        } else {
            assertThat(reset).as(as + ": resetAfter past 2^53").isBetween(step.resetAfterMicros() - 1,
                    step.resetAfterMicros() + 1);
        }
        assertState(as + ": admitted", lua[5], step.admitted(), state);
        assertState(as + ": rejected", lua[6], step.rejected(), state);
        assertThat(Long.parseLong(lua[7])).as(as + ": grantable").isEqualTo(java.grantable(state, now, q[3]));
        if (state != null) {
            long expires = java.expiresAt(state);
            long luaExpires = Long.parseLong((String) out.get(at + 1));
            if (expires <= MAX_TIME) {
                assertThat(luaExpires).as(as + ": expiresAt").isEqualTo(expires);
            } else {
                assertThat(luaExpires).as(as + ": expiresAt past the clock").isGreaterThan(MAX_TIME);
            }
        }
        // what the Redis dispatcher does with a state written under other parameters (an expired one is dropped)
        if (old != null && now < Algorithms.of(previous).expiresAt(old) && !previous.equals(limit)) {
            assertState(as + ": migrate " + old, (String) out.get(at + 2), java.migrate(old, previous, now), old);
        }
    }

    private void checkDerived(String source, Case c, Limit limit, Algorithm<Object> java) {
        if (c.derived().isEmpty()) {
            return;
        }
        List<String> args = new ArrayList<>(List.of("EVAL", source, "0", c.name(), LimitParams.encode(limit),
                "params"));
        args.addAll(c.derived());
        List<?> out = (List<?>) RedisServer.shared().call(args.toArray(new String[0]));
        for (int i = 0; i < c.derived().size(); i++) {
            double expected = (Double) field(java, c.derived().get(i));
            assertThat(Double.doubleToRawLongBits(Double.parseDouble((String) out.get(i))))
                    .as(c.name() + " " + LimitParams.encode(limit) + ": " + c.derived().get(i) + " = " + expected)
                    .isEqualTo(Double.doubleToRawLongBits(expected));
        }
    }

    private static void assertState(String as, String lua, Object java, Object input) {
        if (java == input) {
            assertThat(lua).as(as + " is the input state").isEqualTo("same");
            return;
        }
        if (java == null) {
            assertThat(lua).as(as).isEqualTo("-");
            return;
        }
        assertThat(lua).as(as).isNotIn("same", "-");
        RecordComponent[] components = java.getClass().getRecordComponents();
        String[] words = lua.split(",");
        for (int i = 0; i < components.length; i++) {
            Object value = component(java, components[i].getName());
            if (value instanceof Double d) {
                assertThat(Double.doubleToRawLongBits(Double.parseDouble(words[i])))
                        .as(as + " " + components[i].getName() + " (" + d + ", Lua " + words[i] + ")")
                        .isEqualTo(Double.doubleToRawLongBits(d));
            } else {
                assertThat(Long.parseLong(words[i])).as(as + " " + components[i].getName()).isEqualTo(value);
            }
        }
    }

    // ------------------------------------------------------------------------------------------ reflection

    private static String encode(Object state) {
        if (state == null) {
            return "-";
        }
        List<String> words = new ArrayList<>();
        for (RecordComponent rc : state.getClass().getRecordComponents()) {
            Object v = component(state, rc.getName());
            words.add(v instanceof Double d ? (d == 0.0 ? "0" : LimitParams.exactDouble(d)) : v.toString());
        }
        return String.join(",", words);
    }

    private static Object newState(Class<?> type, Object[] values) {
        try {
            Class<?>[] types = Arrays.stream(type.getRecordComponents()).map(RecordComponent::getType)
                    .toArray(Class<?>[]::new);
            Constructor<?> constructor = type.getDeclaredConstructor(types);
            constructor.setAccessible(true);
            return constructor.newInstance(values);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Object component(Object record, String name) {
        try {
            var accessor = record.getClass().getDeclaredMethod(name);
            accessor.setAccessible(true);
            return accessor.invoke(record);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Object field(Object object, String name) {
        for (Class<?> type = object.getClass(); type != null; type = type.getSuperclass()) {
            try {
                Field f = type.getDeclaredField(name);
                f.setAccessible(true);
                return f.get(object);
            } catch (NoSuchFieldException e) {
                // look in the superclass
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            }
        }
        throw new IllegalStateException("no field " + name + " in " + object.getClass());
    }
}
