package io.sluice.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.Concurrency;
import io.sluice.FixedWindow;
import io.sluice.Gcra;
import io.sluice.LeakyBucket;
import io.sluice.Limit;
import io.sluice.RefreshPeriod;
import io.sluice.RollingWindow;
import io.sluice.SlidingLog;
import io.sluice.SlidingWindow;
import io.sluice.SmoothBursty;
import io.sluice.SmoothWarmingUp;
import io.sluice.TokenBucket;
import io.sluice.testkit.Seeds;
import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.SharedRedis;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * rule_one.lua, the dispatcher's fast paths for one enforced limit deciding "try" or "reserve" (the single form)
 * or a batch of "try", "reserve" and "at_most" requests (the batch form, coalesced mode), decide exactly as
 * rule.lua's general way: the same seeded calls run on two sets of keys, one with the limit count "1" (the fast
 * path) and one with "1:0" (the same rule, one enforced limit, written as a shadow mask, which the fast paths do
 * not take), and every reply field, every stored state, every stored replay reply and each state's expiry must be
 * equal; replays (a request id sent again), states of another version and keys of another type included.
 */
@ExtendWith(SharedRedis.class)
class FastPathIT {

    private static final long START = 1_767_225_600_000_000L;

    private final SluiceScript script = SluiceScript.get();
    private final RedisServer redis = RedisServer.shared();

    /** Every algorithm but calendar_window, whose parameter words the client rebuilds for each window. */
    static Stream<Limit> limits() {
        return Stream.of(
                TokenBucket.of(5, 1, Duration.ofSeconds(1)),
                TokenBucket.of(10, 4, Duration.ofSeconds(1)).withRefill(TokenBucket.Refill.INTERVAL),
                TokenBucket.of(8, 2, Duration.ofSeconds(1)).withRefill(TokenBucket.Refill.INTERVAL_ALIGNED)
                        .withInitialTokens(3),
                Gcra.of(10, Duration.ofSeconds(1)).withBurst(3),
                FixedWindow.of(4, Duration.ofSeconds(2)),
                SlidingWindow.of(6, Duration.ofSeconds(3)),
                SlidingLog.of(6, Duration.ofSeconds(2)).withMinGap(Duration.ofMillis(150)),
                RollingWindow.of(10, Duration.ofSeconds(2), Duration.ofMillis(300)),
                LeakyBucket.of(5, Duration.ofSeconds(1)),
                RefreshPeriod.of(5, Duration.ofSeconds(1)),
                SmoothBursty.of(2.0),
                SmoothWarmingUp.of(5.0, Duration.ofSeconds(2)),
                Concurrency.of(3, Duration.ofSeconds(1)));
    }

    @ParameterizedTest
    @MethodSource("limits")
    void theFastPathDecidesStoresAndRepliesAsTheGeneralWay(Limit limit) {
        redis.call("FUNCTION", "LOAD", "REPLACE", script.functionLibrary());
        Random random = new Random(Seeds.of("FastPathIT." + limit));
        String name = limit.algorithm();
        String words = LimitParams.encode(limit);
        String fingerprint = LimitParams.fingerprint(name, words);
        long now = START;
        String lastId = null;
        int admitted = 0;
        int rejected = 0;
        long slowest = 0;
        for (int i = 0; i < 300; i++) {
            now += random.nextInt(4) == 0 ? 0 : random.nextInt(400_000);
            String op = random.nextBoolean() ? "try" : "reserve";
            String permits = Integer.toString(random.nextInt(10) == 0 ? 0 : 1 + random.nextInt(3));
            String maxWait = op.equals("try") ? "0" : switch (random.nextInt(3)) {
                case 0 -> "0";
                case 1 -> Long.toString(random.nextInt(2_000_000));
                default -> Long.toString(Long.MAX_VALUE);
            };
            // Now and then the previous call again, with its request id: both ways answer it as they first did.
            String id = lastId != null && random.nextInt(8) == 0 ? lastId : "fp-" + i;
            lastId = id;
            String key = "{fp:" + name + "}:" + random.nextInt(2);
            // Now and then another version's fingerprint (the stored state is dropped and the key rewritten), or a
            // key of another type (a state of the hash layout of earlier versions: dropped too).
            String version = random.nextInt(15) == 0 ? "zzzzzz" : fingerprint;
            if (random.nextInt(40) == 0) {
                for (String side : List.of("f", "g")) {
                    redis.call("DEL", side + key);
                    redis.call("HSET", side + key, "old", "1");
                }
            }
            List<String> args = new ArrayList<>(List.of(op, permits, maxWait, now + ",1000", id, "60000", "1", name,
                    version, words));
            String at = "call " + i + ": " + op + " " + permits + " (max wait " + maxWait + ") on " + limit;
            long before = System.currentTimeMillis();
            Object fast = call("f" + key, "f" + key + ":r:" + id, args);
            args.set(6, "1:0");
            Object general = call("g" + key, "g" + key + ":r:" + id, args);
            slowest = Math.max(slowest, System.currentTimeMillis() - before);
            assertThat(fast).as(at).isEqualTo(general);
            assertThat(stored("f" + key)).as("state after " + at).isEqualTo(stored("g" + key));
            assertThat(redis.call("GET", "f" + key + ":r:" + id)).as("stored reply after " + at)
                    .isEqualTo(redis.call("GET", "g" + key + ":r:" + id));
            // The keys' expiries were set by PX (client time) by the two calls of one earlier pair (or this one), at
            // instants at most `slowest` ms apart: equal expiries, read on the server's clock.
            long fastExpiry = (Long) redis.call("PEXPIRETIME", "f" + key);
            long generalExpiry = (Long) redis.call("PEXPIRETIME", "g" + key);
            assertThat(fastExpiry < 0).as("expiry kind after " + at).isEqualTo(generalExpiry < 0);
            if (fastExpiry >= 0) {
                assertThat(Math.abs(generalExpiry - fastExpiry)).as("expiry after " + at).isLessThanOrEqualTo(slowest + 1);
            }
            if (String.valueOf(((List<?>) fast).get(0)).equals("1")) {
                admitted++;
            } else {
                rejected++;
            }
        }
        // The seeded calls exercise both verdicts.
        assertThat(admitted).as("admitted calls").isPositive();
        assertThat(rejected).as("rejected calls").isPositive();
    }

    /**
     * The batch form's fast path: seeded batches of 1 to 24 requests, drawn from a few argument triples so that runs
     * of equal requests (which the fast path answers from the previous reply) are common, as on a hot key.
     */
    @ParameterizedTest
    @MethodSource("limits")
    void theBatchFastPathDecidesStoresAndRepliesAsTheGeneralWay(Limit limit) {
        redis.call("FUNCTION", "LOAD", "REPLACE", script.functionLibrary());
        Random random = new Random(Seeds.of("FastPathIT.batch." + limit));
        String name = limit.algorithm();
        String words = LimitParams.encode(limit);
        String fingerprint = LimitParams.fingerprint(name, words);
        long now = START;
        String lastId = null;
        int admitted = 0;
        int rejected = 0;
        int runs = 0;
        long slowest = 0;
        for (int i = 0; i < 120; i++) {
            now += random.nextInt(4) == 0 ? 0 : random.nextInt(600_000);
            List<String[]> kinds = new ArrayList<>();
            for (int kind = 0; kind < 1 + random.nextInt(3); kind++) {
                String op = switch (random.nextInt(3)) {
                    case 0 -> "try";
                    case 1 -> "reserve";
                    default -> "at_most";
                };
                String permits = Integer.toString(random.nextInt(10) == 0 ? 0 : 1 + random.nextInt(3));
                String maxWait = !op.equals("reserve") ? "0" : switch (random.nextInt(3)) {
                    case 0 -> "0";
                    case 1 -> Long.toString(random.nextInt(2_000_000));
                    default -> Long.toString(Long.MAX_VALUE);
                };
                kinds.add(new String[] {op, permits, maxWait});
            }
            int size = 1 + random.nextInt(24);
            List<String> requests = new ArrayList<>();
            String[] previous = null;
            for (int r = 0; r < size; r++) {
                String[] request = kinds.get(random.nextInt(kinds.size()));
                runs += request == previous ? 1 : 0;
                previous = request;
                requests.addAll(List.of(request));
            }
            String id = lastId != null && random.nextInt(8) == 0 ? lastId : "fpb-" + i;
            lastId = id;
            String key = "{fpb:" + name + "}:" + random.nextInt(2);
            String version = random.nextInt(15) == 0 ? "zzzzzz" : fingerprint;
            if (random.nextInt(40) == 0) {
                for (String side : List.of("f", "g")) {
                    redis.call("DEL", side + key);
                    redis.call("HSET", side + key, "old", "1");
                }
            }
            List<String> args = new ArrayList<>(List.of("batch", Integer.toString(size), "0", now + ",1000", id,
                    "60000", "1", name, version, words));
            args.addAll(requests);
            String at = "batch " + i + ": " + requests + " on " + limit;
            long before = System.currentTimeMillis();
            Object fast = call("f" + key, "f" + key + ":r:" + id, args);
            args.set(6, "1:0");
            Object general = call("g" + key, "g" + key + ":r:" + id, args);
            slowest = Math.max(slowest, System.currentTimeMillis() - before);
            assertThat(fast).as(at).isEqualTo(general);
            assertThat(stored("f" + key)).as("state after " + at).isEqualTo(stored("g" + key));
            assertThat(redis.call("GET", "f" + key + ":r:" + id)).as("stored reply after " + at)
                    .isEqualTo(redis.call("GET", "g" + key + ":r:" + id));
            long fastExpiry = (Long) redis.call("PEXPIRETIME", "f" + key);
            long generalExpiry = (Long) redis.call("PEXPIRETIME", "g" + key);
            assertThat(fastExpiry < 0).as("expiry kind after " + at).isEqualTo(generalExpiry < 0);
            if (fastExpiry >= 0) {
                assertThat(Math.abs(generalExpiry - fastExpiry)).as("expiry after " + at).isLessThanOrEqualTo(slowest + 1);
            }
            List<?> reply = (List<?>) fast;
            for (int r = 0; r + 10 < reply.size(); r += 10) {
                if (String.valueOf(reply.get(r)).equals("1")) {
                    admitted++;
                } else {
                    rejected++;
                }
            }
        }
        // The seeded batches exercise both verdicts and runs of equal requests.
        assertThat(admitted).as("admitted requests").isPositive();
        assertThat(rejected).as("rejected requests").isPositive();
        assertThat(runs).as("requests equal to the one before").isPositive();
    }

    @Test
    void oneEnforcedLimitTakesTheFastPathAndAMaskedOneTheGeneralWay() {
        // An unknown algorithm fails where the path that decides looks it up: the error names the file.
        String sha = (String) redis.call("SCRIPT", "LOAD", script.source());
        List<String> args = new ArrayList<>(List.of("try", "1", "0", START + ",1000", "id", "60000", "1",
                "no_such_algorithm", "abcdef", "1 2 3"));
        assertThatThrownBy(() -> evalsha(sha, args))
                .satisfies(e -> assertThat(script.explain(e.getMessage())).contains("(rule_one.lua:"));
        args.set(6, "1:0");
        assertThatThrownBy(() -> evalsha(sha, args))
                .satisfies(e -> assertThat(script.explain(e.getMessage())).contains("(rule.lua:"));
        // The batch form: its fast path for "try", "reserve" and "at_most"; the general way for any other request.
        List<String> batch = new ArrayList<>(List.of("batch", "2", "0", START + ",1000", "id", "60000", "1",
                "no_such_algorithm", "abcdef", "1 2 3", "try", "1", "0", "at_most", "2", "0"));
        assertThatThrownBy(() -> evalsha(sha, batch))
                .satisfies(e -> assertThat(script.explain(e.getMessage())).contains("(rule_one.lua:"));
        batch.set(13, "peek");
        assertThatThrownBy(() -> evalsha(sha, batch))
                .satisfies(e -> assertThat(script.explain(e.getMessage())).contains("(rule.lua:"));
        batch.set(13, "at_most");
        batch.set(6, "1:0");
        assertThatThrownBy(() -> evalsha(sha, batch))
                .satisfies(e -> assertThat(script.explain(e.getMessage())).contains("(rule.lua:"));
    }

    /** The key's value, or its type when it holds no string (a key of another type a replayed call left alone). */
    private Object stored(String key) {
        Object type = redis.call("TYPE", key);
        return "string".equals(type) ? redis.call("GET", key) : type;
    }

    private Object evalsha(String sha, List<String> args) {
        List<String> words = new ArrayList<>(List.of("EVALSHA", sha, "2", "{fp:err}:x", "{fp:err}:r:id"));
        words.addAll(args);
        return redis.call(words.toArray(new String[0]));
    }

    private Object call(String stateKey, String requestKey, List<String> args) {
        List<String> words = new ArrayList<>(List.of("FCALL", script.functionName(), "2", stateKey, requestKey));
        words.addAll(args);
        return redis.call(words.toArray(new String[0]));
    }
}
