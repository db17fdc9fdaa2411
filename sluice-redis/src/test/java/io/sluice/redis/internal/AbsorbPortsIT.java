package io.sluice.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.FixedWindow;
import io.sluice.Limit;
import io.sluice.SlidingWindow;
import io.sluice.internal.algorithm.Algorithms;
import io.sluice.internal.algorithm.Arith;
import io.sluice.internal.algorithm.SyncableAlgorithm;
import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.SharedRedis;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The Lua {@code M.absorb} and {@code M.absorbableUntil} of {@code fixed_window} and {@code sliding_window}
 * against {@link SyncableAlgorithm}, one transition at a time: random parameters (the largest counts and windows
 * included), random states (saturated counts, a previous-only sliding state, times at 0 and near 2^53), and
 * permits admitted before, at and "after" now, including two windows back. Every resulting state must be equal,
 * and the same object when Java returns the input state.
 */
@ExtendWith(SharedRedis.class)
class AbsorbPortsIT {

    private static final long MAX_TIME = Arith.MAX_TIME;
    private static final long LONGEST = Arith.micros(Limit.MAX_DURATION);
    private static final int VECTORS = 6_000;
    private static final int PER_CALL = 300;

    private final Random random = new Random(Long.getLong("sluice.seed", 20261123L));

    private static final String BODY = """
            local M = ALG[ARGV[1]]
            local p = M.parse(sluice.words(ARGV[2]))
            local function decode(s)
              if s == "-" then return nil end
              local state, i = {}, 1
              for w in string.gmatch(s, "[^,]+") do state[M.fields[i][1]] = sluice.arg_int(w); i = i + 1 end
              return state
            end
            local function encode(state, input)
              if state == input then return "same" end
              if state == nil then return "-" end
              local out = {}
              for i, f in ipairs(M.fields) do out[i] = sluice.fmt_int(state[f[1]]) end
              return table.concat(out, ",")
            end
            local out = {}
            for i = 3, #ARGV, 4 do
              local state = decode(ARGV[i])
              local now, permits, at = sluice.arg_int(ARGV[i + 1]), sluice.arg_int(ARGV[i + 2]), sluice.arg_int(ARGV[i + 3])
              out[#out + 1] = encode(M.absorb(state, now, permits, at, p), state) .. " "
                .. sluice.fmt_int(M.absorbableUntil(at, p))
            end
            return out
            """;

    @Test
    void fixedWindow() {
        run("fixed_window", this::fixed);
    }

    @Test
    void slidingWindow() {
        run("sliding_window", this::sliding);
    }

    private Limit fixed(Random r) {
        FixedWindow l = FixedWindow.of(count(r), Duration.ofNanos(1_000 * window(r)));
        return l.withAlign(r.nextBoolean() ? FixedWindow.Align.EPOCH : FixedWindow.Align.FIRST_REQUEST)
                .withCountRejected(r.nextBoolean());
    }

    private Limit sliding(Random r) {
        return SlidingWindow.of(count(r), Duration.ofNanos(1_000 * window(r)));
    }

    private static long count(Random r) {
        long[] counts = {1, 2, 3, 10, 1_000, Limit.MAX_COUNT, Limit.MAX_COUNT - 1, 1 + r.nextInt(100),
                1 + (long) (r.nextDouble() * Limit.MAX_COUNT)};
        return counts[r.nextInt(counts.length)];
    }

    private static long window(Random r) {
        long[] windows = {1, 7, 1_000, 1_000_000, 60_000_000, LONGEST, LONGEST - 1, 1 + r.nextInt(5_000_000),
                1 + (long) (r.nextDouble() * LONGEST)};
        return windows[r.nextInt(windows.length)];
    }

    private long time(Random r) {
        return switch (r.nextInt(5)) {
            case 0 -> r.nextInt(3);
            case 1 -> MAX_TIME - r.nextInt(3);
            case 2 -> MAX_TIME - (long) (r.nextDouble() * 3 * LONGEST);
            default -> 1_767_225_600_000_000L + (long) (r.nextDouble() * 1e12);
        };
    }

    private static long within(long t) {
        return Math.max(0, Math.min(MAX_TIME, t));
    }

    /** A count as states hold them: small, at the limit, just above it, saturated. */
    private static long stateCount(Random r, long limit, boolean zeroAllowed) {
        long[] counts = {1, limit, limit + 1, Limit.MAX_COUNT + 1, 1 + (long) (r.nextDouble() * limit), 0};
        long c = counts[r.nextInt(zeroAllowed ? counts.length : counts.length - 1)];
        return Math.min(c, Limit.MAX_COUNT + 1);
    }

    private long[] state(Random r, Limit limit, long window) {
        long t = time(r);
        boolean aligned = !(limit instanceof FixedWindow f) || f.align() == FixedWindow.Align.EPOCH;
        long start = aligned ? t - t % window : t;
        if (limit instanceof FixedWindow f) {
            return new long[] {start, stateCount(r, f.limit(), false)};
        }
        long l = ((SlidingWindow) limit).limit();
        long previous = stateCount(r, l, true);
        long current = stateCount(r, l, previous > 0);
        return new long[] {start, previous, current};
    }

    private void run(String name, java.util.function.Function<Random, Limit> limits) {
        String source = SluiceScript.get().library() + "\n"
                + SluiceScript.get().part("algorithms/" + name + ".lua") + "\n" + BODY;
        for (int done = 0; done < VECTORS; done += PER_CALL) {
            Limit limit = limits.apply(random);
            @SuppressWarnings("unchecked")
            SyncableAlgorithm<Object> java = (SyncableAlgorithm<Object>) (SyncableAlgorithm<?>) Algorithms.of(limit);
            long window = Arith.micros(windowOf(limit));
            List<String> args = new ArrayList<>(List.of("EVAL", source, "0", name, LimitParams.encode(limit)));
            List<Object> states = new ArrayList<>();
            List<long[]> vectors = new ArrayList<>();
            for (int i = 0; i < PER_CALL; i++) {
                long[] fields = random.nextInt(6) == 0 ? null : state(random, limit, window);
                Object state = fields == null ? null : java.state(fields);
                long base = fields == null ? time(random) : fields[0];
                long now = within(switch (random.nextInt(5)) {
                    case 0 -> base;
                    case 1 -> base + random.nextInt(3) - 1;
                    case 2 -> base + (long) (random.nextDouble() * 3 * window);
                    case 3 -> base - (long) (random.nextDouble() * window); // a clock behind the state
                    default -> time(random);
                });
                long permits = switch (random.nextInt(6)) {
                    case 0 -> 0;
                    case 1 -> Limit.MAX_COUNT + 1;
                    case 2 -> 1 + (long) (random.nextDouble() * Limit.MAX_COUNT);
                    default -> 1 + random.nextInt(20);
                };
                long admittedAt = within(switch (random.nextInt(6)) {
                    case 0 -> now;
                    case 1 -> now - window; // the previous window, or the edge of the one before
                    case 2 -> now - 2 * window + random.nextInt(3) - 1;
                    case 3 -> now + (long) (random.nextDouble() * window); // a clock running ahead
                    default -> now - (long) (random.nextDouble() * 3 * window);
                });
                states.add(state);
                vectors.add(new long[] {now, permits, admittedAt});
                args.addAll(List.of(fields == null ? "-" : Arrays.stream(fields).mapToObj(Long::toString)
                        .collect(Collectors.joining(",")), Long.toString(now), Long.toString(permits),
                        Long.toString(admittedAt)));
            }
            List<?> out = (List<?>) RedisServer.shared().call(args.toArray(new String[0]));
            for (int i = 0; i < PER_CALL; i++) {
                long[] v = vectors.get(i);
                Object state = states.get(i);
                String as = name + " " + LimitParams.encode(limit) + ", state " + state + ", now " + v[0]
                        + ", absorb " + v[1] + " admitted at " + v[2];
                String[] lua = ((String) out.get(i)).split(" ");
                Object expected = java.absorb(state, v[0], v[1], v[2]);
                if (expected == state) {
                    assertThat(lua[0]).as(as + ": the input state").isEqualTo("same");
                } else if (expected == null) {
                    assertThat(lua[0]).as(as).isEqualTo("-");
                } else {
                    assertThat(lua[0]).as(as).isEqualTo(Arrays.stream(java.fields(expected))
                            .mapToObj(Long::toString).collect(Collectors.joining(",")));
                }
                long until = java.absorbableUntil(v[2]);
                long luaUntil = Long.parseLong(lua[1]);
                if (until <= MAX_TIME) {
                    assertThat(luaUntil).as(as + ": absorbableUntil").isEqualTo(until);
                } else {
                    assertThat(luaUntil).as(as + ": absorbableUntil past the clock").isGreaterThan(MAX_TIME);
                }
            }
        }
    }

    private static Duration windowOf(Limit limit) {
        return limit instanceof FixedWindow f ? f.window() : ((SlidingWindow) limit).window();
    }
}
