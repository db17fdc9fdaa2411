package io.sluice.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.CalendarWindow;
import io.sluice.CalendarWindow.Period;
import io.sluice.Limit;
import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.internal.algorithm.Algorithm;
import io.sluice.internal.algorithm.Algorithms;
import io.sluice.internal.algorithm.Arith;
import io.sluice.internal.algorithm.CalendarPeriods;
import io.sluice.internal.algorithm.Step;
import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.SharedRedis;
import java.lang.reflect.Constructor;
import java.time.DayOfWeek;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code calendar_window.lua} against {@code CalendarWindowAlgorithm}, and the server's clock choosing the window
 * from the table a client computed on a skewed clock.
 *
 * <p>The port's step, grantable, expiresAt and migrate must answer as Java's for random limits (every period,
 * zones with one-hour, half-hour and no shifts), states and times, near daylight-saving changes and at both
 * ends of the clock; each vector carries the table a client would send, computed at a client time in the
 * previous, the same or the next window (TransitionPortsIT's harness sends one parameter string per call, and a
 * calendar table is only valid around its own time, so this test has its own).
 */
@ExtendWith(SharedRedis.class)
class CalendarWindowPortIT {

    private static final long SEC = 1_000_000L;
    private static final int VECTORS = 3_000;
    private static final int PER_CALL = 200;
    private static final List<ZoneId> ZONES = List.of(ZoneId.of("Europe/Berlin"), ZoneId.of("America/New_York"),
            ZoneId.of("Australia/Lord_Howe"), ZoneId.of("Asia/Kolkata"), ZoneId.of("UTC"));
    /** 2026's daylight-saving changes of those zones, which the times cluster around. */
    private static final long[] TRANSITIONS = {1_774_746_000L, 1_792_890_000L, 1_772_953_200L, 1_793_512_800L,
            1_775_314_800L, 1_791_127_800L};

    private static final String BODY = """
            local M = ALG["calendar_window"]
            local function decode(s)
              if s == "-" then return nil end
              local a, b = string.match(s, "^(%S+),(%S+)$")
              return { windowEnd = sluice.arg_int(a), count = sluice.arg_int(b) }
            end
            local function encode(state, input)
              if state == input then return "same" end
              if state == nil then return "-" end
              return sluice.fmt_int(state.windowEnd) .. "," .. sluice.fmt_int(state.count)
            end
            local function int(x)
              if x < 0 then return "-" .. sluice.fmt_int(-x) end
              return sluice.fmt_int(x)
            end
            local out = {}
            for i = 1, #ARGV, 7 do
              local p = M.parse(sluice.words(ARGV[i]))
              local state = decode(ARGV[i + 1])
              local now, permits, grant = sluice.arg_int(ARGV[i + 2]), sluice.arg_int(ARGV[i + 3]), sluice.arg_int(ARGV[i + 4])
              local s = M.step(state, now, permits, 0, p)
              local line = table.concat({ tostring(s.allowed), int(s.waitMicros), int(s.remaining),
                int(s.retryAfterMicros), int(s.resetAfterMicros), encode(s.admitted, state), encode(s.rejected, state),
                int(M.grantable(state, now, grant, p)) }, " ")
              if state ~= nil then line = line .. " " .. int(M.expiresAt(state, p)) end
              if ARGV[i + 5] ~= "" and state ~= nil then
                line = line .. " " .. encode(M.migrate(state, M.parse(sluice.words(ARGV[i + 5])), now, p), state)
              end
              out[#out + 1] = line
            end
            return out
            """;

    private final Random random = new Random(Long.getLong("sluice.seed", 20261125L));

    @Test
    void thePortDecidesAsTheJavaTransition() {
        String source = SluiceScript.get().library() + "\n"
                + SluiceScript.get().part("algorithms/calendar_window.lua") + "\n" + BODY;
        for (int done = 0; done < VECTORS; done += PER_CALL) {
            List<String> args = new ArrayList<>(List.of("EVAL", source, "0"));
            List<Object[]> vectors = new ArrayList<>();
            for (int i = 0; i < PER_CALL; i++) {
                CalendarWindow limit = limit();
                CalendarWindow previous = random.nextBoolean() ? null : limit();
                long now = time();
                long[] w = CalendarPeriods.window(limit, now);
                Object state = random.nextInt(5) == 0 ? null : state(limit, now, w);
                long permits = switch (random.nextInt(5)) {
                    case 0 -> 0;
                    case 1 -> limit.limit() + 1 + random.nextInt(3);
                    default -> 1 + random.nextInt((int) Math.min(limit.limit(), 8));
                };
                long grant = random.nextBoolean() ? permits : random.nextInt(20);
                long client = switch (random.nextInt(3)) {
                    case 0 -> w[0] - 1 < 0 ? now : w[0] - 1;             // a client still in the previous window
                    case 1 -> w[1] >= CalendarPeriods.END ? now : w[1];   // one already in the next window
                    default -> now;
                };
                String words = new CalendarTable(limit, LimitParams.encode(limit)).words(Long.toString(client));
                vectors.add(new Object[] {limit, previous, state, now, permits, grant});
                args.addAll(List.of(words, encode(state), Long.toString(now), Long.toString(permits),
                        Long.toString(grant), previous == null ? "" : LimitParams.encode(previous), ""));
            }
            List<?> out = (List<?>) RedisServer.shared().call(args.toArray(new String[0]));
            for (int i = 0; i < PER_CALL; i++) {
                compare(vectors.get(i), (String) out.get(i));
            }
        }
    }

    @Test
    void aServerTimeOutsideTheTableIsRefusedNamingBoth() {
        String source = SluiceScript.get().library() + "\n"
                + SluiceScript.get().part("algorithms/calendar_window.lua") + "\n" + BODY;
        CalendarWindow perMinute = CalendarWindow.of(5, Period.MINUTE, ZoneId.of("Europe/Berlin"));
        long now = 1_774_746_000L * SEC;
        // the client's clock three minutes ahead: its table starts two minutes after the server's now
        String words = new CalendarTable(perMinute, LimitParams.encode(perMinute)).words(
                Long.toString(now + 180 * SEC));
        assertThatThrownBy(() -> RedisServer.shared().call("EVAL", source, "0", words, "-", Long.toString(now), "1",
                "1", "", ""))
                .hasMessageContaining("calendar_window: the time " + now + " is outside the windows the client sent")
                .hasMessageContaining("differ by more than one minute window (Europe/Berlin)");
        // a live window needs no table: the same skewed call decides
        List<?> out = (List<?>) RedisServer.shared().call("EVAL", source, "0", words, (now + 30 * SEC) + ",2",
                Long.toString(now), "1", "1", "", "");
        assertThat((String) out.get(0)).startsWith("true 0 2 0 30000000 ");
    }

    /**
     * Through the whole script on Redis's own clock: a client whose clock runs 40 s ahead (or 50 s behind)
     * sends the table of its minute; the window Redis uses is the one containing Redis's time, so the reset is
     * the real next minute boundary by Redis's clock. A client three minutes off is refused.
     */
    @Test
    void redisServerTimePicksTheWindowFromASkewedClientsTable() {
        CalendarWindow perMinute = CalendarWindow.of(2, Period.MINUTE, ZoneId.of("Asia/Kolkata"));
        Rule rule = Rule.of("calendar-skew", perMinute);
        RedisRule compiled = RedisRule.compile(rule, SluiceScript.get());
        KeyLayout layout = new KeyLayout("skew");
        for (long skew : new long[] {40 * SEC, -50 * SEC}) {
            String key = "k" + skew;
            long before = redisTime();
            List<?> reply = call(compiled, layout, key, skew);
            long after = redisTime();
            long reset = Long.parseLong(String.valueOf(reply.get(4)));
            assertThat(String.valueOf(reply.get(0))).as("allowed").isEqualTo("1");
            // the window end by Redis's clock, whichever instant of the call it read
            long earliestEnd = CalendarPeriods.end(perMinute, before);
            long latestEnd = CalendarPeriods.end(perMinute, after);
            assertThat(List.of(earliestEnd - before, latestEnd - after)).as("reset by Redis's clock")
                    .anySatisfy(expected -> assertThat(reset).isBetween(expected - (after - before), expected));
            assertThat(reset).isPositive().isLessThanOrEqualTo(60 * SEC);
        }
        assertThatThrownBy(() -> call(compiled, layout, "far", 180 * SEC))
                .hasMessageContaining("is outside the windows the client sent");
    }

    // ------------------------------------------------------------------------------------------ helpers

    /** One decision through rule.lua on server time, with the table of a client clock {@code skew} µs off. */
    private static List<?> call(RedisRule compiled, KeyLayout layout, String key, long skew) {
        DecisionCall.Target target = new DecisionCall.Target(compiled, key, compiled.stateKeys(layout, key));
        DecisionCall decision = DecisionCall.decide(List.of(target), Request.tryAcquire(1), "", "", layout, "3000");
        String[] args = decision.call().args().clone();
        String fixed = compiled.params(0);
        int at = Arrays.asList(args).indexOf(compiled.params(0, ""));
        assertThat(at).as("the calendar words in " + Arrays.toString(args)).isPositive();
        CalendarWindow limit = (CalendarWindow) compiled.rule().limits().get(0);
        args[at] = new CalendarTable(limit, fixed).words(Long.toString(redisTime() + skew));
        List<String> command = new ArrayList<>(List.of("EVAL", SluiceScript.get().source(),
                Integer.toString(decision.call().keys().length)));
        command.addAll(Arrays.asList(decision.call().keys()));
        command.addAll(Arrays.asList(args));
        return (List<?>) RedisServer.shared().call(command.toArray(new String[0]));
    }

    private static long redisTime() {
        List<?> time = (List<?>) RedisServer.shared().call("TIME");
        return Long.parseLong(String.valueOf(time.get(0))) * SEC + Long.parseLong(String.valueOf(time.get(1)));
    }

    private CalendarWindow limit() {
        long limit = random.nextInt(4) == 0 ? Limit.MAX_COUNT - random.nextInt(2) : 1 + random.nextInt(6);
        Period period = Period.values()[random.nextInt(Period.values().length)];
        return new CalendarWindow("c", limit, period, ZONES.get(random.nextInt(ZONES.size())),
                DayOfWeek.values()[random.nextInt(7)]);
    }

    private long time() {
        return switch (random.nextInt(6)) {
            case 0 -> random.nextInt(100) * 60 * SEC + random.nextInt(1000);   // 1970
            case 1 -> Arith.MAX_TIME - random.nextInt(3) - (random.nextBoolean() ? 0 : 400L * 86_400 * SEC);
            case 2 -> (long) (random.nextDouble() * Arith.MAX_TIME);
            default -> TRANSITIONS[random.nextInt(TRANSITIONS.length)] * SEC
                    + (long) ((random.nextDouble() - 0.5) * 4 * 3_600 * SEC);
        };
    }

    /** A state of the window of now, of an earlier window, or whose count a lowered limit left above it. */
    private Object state(CalendarWindow limit, long now, long[] w) {
        long end = switch (random.nextInt(4)) {
            case 0 -> w[0];              // ended at the start of now's window
            case 1 -> now < Arith.MAX_TIME ? now + 1 : CalendarPeriods.END; // states hold boundaries <= END
            default -> w[1];
        };
        long count = 1 + (long) (random.nextDouble() * Math.min(limit.limit() + 3, Limit.MAX_COUNT));
        try {
            Class<?> type = Class.forName("io.sluice.internal.algorithm.CalendarWindowAlgorithm$State");
            Constructor<?> c = type.getDeclaredConstructor(long.class, long.class);
            c.setAccessible(true);
            return c.newInstance(end, count);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String encode(Object state) {
        if (state == null) {
            return "-";
        }
        long[] f = fields(state);
        return f[0] + "," + f[1];
    }

    private static long[] fields(Object state) {
        try {
            var end = state.getClass().getDeclaredMethod("windowEnd");
            var count = state.getClass().getDeclaredMethod("count");
            end.setAccessible(true);
            count.setAccessible(true);
            return new long[] {(Long) end.invoke(state), (Long) count.invoke(state)};
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String stateWords(Object java, Object input) {
        if (java == input) {
            return "same";
        }
        return java == null ? "-" : encode(java);
    }

    private static String signed(long x) {
        return Long.toString(x);
    }

    private static void compare(Object[] v, String lua) {
        CalendarWindow limit = (CalendarWindow) v[0];
        CalendarWindow previous = (CalendarWindow) v[1];
        Object state = v[2];
        long now = (Long) v[3];
        long permits = (Long) v[4];
        long grant = (Long) v[5];
        Algorithm<Object> java = Algorithms.of(limit);
        Step<Object> step = java.step(state, now, permits, 0);
        StringBuilder expected = new StringBuilder().append(step.allowed()).append(' ').append(step.waitMicros())
                .append(' ').append(step.remaining()).append(' ').append(signed(step.retryAfterMicros())).append(' ')
                .append(step.resetAfterMicros()).append(' ').append(stateWords(step.admitted(), state)).append(' ')
                .append(stateWords(step.rejected(), state)).append(' ').append(java.grantable(state, now, grant));
        if (state != null) {
            expected.append(' ').append(java.expiresAt(state));
            if (previous != null) {
                expected.append(' ').append(stateWords(java.migrate(state, previous, now), state));
            }
        }
        assertThat(lua).as(limit + (previous == null ? "" : " from " + previous) + ", state " + state + ", now "
                + now + ", permits " + permits + ", grantable(" + grant + ")").isEqualTo(expected.toString());
    }
}
