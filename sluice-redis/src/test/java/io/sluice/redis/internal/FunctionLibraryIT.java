package io.sluice.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.FixedWindow;
import io.sluice.Gcra;
import io.sluice.Limit;
import io.sluice.SlidingWindow;
import io.sluice.SmoothBursty;
import io.sluice.TokenBucket;
import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.SharedRedis;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The decision script as a Redis 7 functions library ({@link SluiceScript#functionLibrary()}) decides as the
 * script does: the same calls, one through {@code EVALSHA} on one set of keys and one through {@code FCALL} on
 * another, give the same replies and leave the same stored states, over calls that reuse the modules and helpers
 * the library keeps between calls.
 */
@ExtendWith(SharedRedis.class)
class FunctionLibraryIT {

    private static final long START = 1_767_225_600_000_000L;

    private final SluiceScript script = SluiceScript.get();
    private final RedisServer redis = RedisServer.shared();
    private final Random random = new Random(Long.getLong("sluice.seed", 20261126L));

    @Test
    void fcallDecidesAndStoresAsEvalsha() {
        String sha = (String) redis.call("SCRIPT", "LOAD", script.source());
        redis.call("FUNCTION", "LOAD", "REPLACE", script.functionLibrary());
        List<Limit> limits = List.of(TokenBucket.of(5, 1, Duration.ofSeconds(1)),
                Gcra.of(10, Duration.ofSeconds(1)).withBurst(3), FixedWindow.of(4, Duration.ofSeconds(2)),
                SlidingWindow.of(6, Duration.ofSeconds(3)), SmoothBursty.of(2.0));
        long now = START;
        int calls = 0;
        for (int i = 0; i < 400; i++) {
            Limit limit = limits.get(random.nextInt(limits.size()));
            String name = limit.algorithm();
            String words = LimitParams.encode(limit);
            String key = "{fl:" + random.nextInt(3) + "}:" + name;
            now += random.nextInt(400_000);
            String op = random.nextInt(8) == 0 ? "peek" : "try";
            String permits = Integer.toString(1 + random.nextInt(3));
            String id = "fl-" + i;
            List<String> args = List.of(op, permits, "0", now + ",1000", op.equals("peek") ? "" : id, "60000", "1",
                    name, LimitParams.fingerprint(name, words), words);
            Object viaScript = call(List.of("EVALSHA", sha), "a" + key, "a" + key + ":r:" + id, args);
            Object viaFunction = call(List.of("FCALL", script.functionName()), "b" + key, "b" + key + ":r:" + id,
                    args);
            assertThat(viaFunction).as("call %d: %s %s on %s", i, op, permits, name).isEqualTo(viaScript);
            assertThat(redis.call("GET", "b" + key)).as("state after call %d", i).isEqualTo(redis.call("GET", "a" + key));
            calls++;
        }
        assertThat(calls).isEqualTo(400);
    }

    @Test
    void anErrorInTheLibraryNamesTheFunctionLine() {
        redis.call("FUNCTION", "LOAD", "REPLACE", script.functionLibrary());
        String words = LimitParams.encode(FixedWindow.of(3, Duration.ofMinutes(1)));
        redis.call("SET", "{fl:bad}:fw", LimitParams.fingerprint("fixed_window", words) + "|0|x!");
        assertThatThrownBy(() -> call(List.of("FCALL", script.functionName()), "{fl:bad}:fw", "{fl:bad}:r:1",
                List.of("try", "1", "0", START + ",1000", "1", "60000", "1", "fixed_window",
                        LimitParams.fingerprint("fixed_window", words), words)))
                .hasMessageContaining("expected a base-36 integer, got 'x!'")
                .hasMessageContaining("user_function:");
    }

    private Object call(List<String> command, String stateKey, String requestKey, List<String> args) {
        List<String> words = new ArrayList<>(command);
        words.add("2");
        words.add(stateKey);
        words.add(requestKey);
        words.addAll(args);
        return redis.call(words.toArray(new String[0]));
    }
}
