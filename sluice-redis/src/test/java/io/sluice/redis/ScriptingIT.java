package io.sluice.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.FixedWindow;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.redis.internal.DefaultRedisStore;
import io.sluice.testkit.redis.RedisServer;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * How the store runs its scripts ({@link RedisStore.Builder#scripting}), each case on a redis-server of its own so
 * its command counts are its own: functions by default on Redis 7; EVALSHA where the server or the user refuses
 * functions (a real ACL user; a server where {@code FUNCTION} is an unknown command, as on Redis 6), or when asked.
 */
class ScriptingIT {

    /** Connecting may take this long: a loaded test machine can take over a second for the handshake. */
    private static final Duration PATIENT = Duration.ofSeconds(10);

    private static final Rule RULE = Rule.of("scripting", FixedWindow.of(3, Duration.ofMinutes(1)));

    @Test
    void autoRunsTheFunctionsLibraryOnRedis7() {
        try (RedisServer redis = RedisServer.start()) {
            assertDecidesBy(redis, RedisStore.builder().uri(redis.uri()), "fcall");
        }
    }

    @Test
    void evalNeverSendsAFunctionCommand() {
        try (RedisServer redis = RedisServer.start()) {
            assertDecidesBy(redis, RedisStore.builder().uri(redis.uri()).scripting(Scripting.EVAL), "evalsha");
            assertThat(calls(redis, "function|load")).isZero();
        }
    }

    @Test
    void anAclUserWithoutFunctionFallsBackToEvalsha() {
        try (RedisServer redis = RedisServer.start()) {
            redis.call("ACL", "SETUSER", "nofunction", "on", ">secret", "~*", "&*", "+@all", "-function");
            assertDecidesBy(redis, RedisStore.builder().uri("redis://nofunction:secret@" + RedisServer.HOST + ":"
                    + redis.port()), "evalsha");
        }
    }

    @Test
    void anAclUserWhoMayLoadButNotFcallFallsBackToEvalsha() {
        try (RedisServer redis = RedisServer.start()) {
            redis.call("ACL", "SETUSER", "nofcall", "on", ">secret", "~*", "&*", "+@all", "-fcall", "-fcall_ro");
            assertDecidesBy(redis, RedisStore.builder().uri("redis://nofcall:secret@" + RedisServer.HOST + ":"
                    + redis.port()), "evalsha");
            assertThat(calls(redis, "function|load")).as("the library loaded; the ping was refused").isEqualTo(1);
        }
    }

    @Test
    void forcingFunctionsOnAUserWithoutThemFailsNamingTheReply() {
        try (RedisServer redis = RedisServer.start()) {
            redis.call("ACL", "SETUSER", "nofunction", "on", ">secret", "~*", "&*", "+@all", "-function");
            assertThatThrownBy(() -> RedisStore.builder().uri("redis://nofunction:secret@" + RedisServer.HOST + ":"
                    + redis.port()).scripting(Scripting.FUNCTIONS).timeout(PATIENT).build())
                    .isInstanceOf(RedisStoreException.class)
                    .hasMessageContaining("scripting=functions")
                    .hasMessageContaining("NOPERM")
                    .hasMessageContaining("use scripting=auto or eval");
        }
    }

    @Test
    void aServerWithoutTheFunctionCommandFallsBackToEvalsha() {
        // Redis 6 answers FUNCTION with "unknown command"; so does a Redis 7 that renamed it away.
        try (RedisServer redis = RedisServer.startWith("--rename-command", "FUNCTION", "")) {
            assertThatThrownBy(() -> redis.call("FUNCTION", "LIST")).hasMessageContaining("unknown command");
            assertDecidesBy(redis, RedisStore.builder().uri(redis.uri()), "evalsha");
            assertThatThrownBy(() -> RedisStore.builder().uri(redis.uri()).scripting(Scripting.FUNCTIONS).timeout(PATIENT).build())
                    .isInstanceOf(RedisStoreException.class).hasMessageContaining("unknown command");
        }
    }

    @Test
    void theSettingSpellsItsValues() {
        assertThat(Scripting.parse("redis_scripting", "FUNCTIONS")).isEqualTo(Scripting.FUNCTIONS);
        assertThat(Scripting.parse("redis_scripting", "eval")).isEqualTo(Scripting.EVAL);
        assertThat(Scripting.AUTO).hasToString("auto");
        assertThatThrownBy(() -> Scripting.parse("redis_scripting", "lua"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("redis_scripting must be auto, functions or eval, was 'lua'");
        assertThatThrownBy(() -> RedisStore.builder().scripting(null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("scripting must not be null");
    }

    /** Three decisions and a rejection, all by {@code command} ({@code fcall} or {@code evalsha}), none by the other. */
    private static void assertDecidesBy(RedisServer redis, RedisStore.Builder builder, String command) {
        try (RedisStore store = builder.prefix("scripting").timeout(PATIENT).build();
             RateLimiter l = RateLimiter.builder(RULE).store(store).build()) {
            assertThat(((DefaultRedisStore) store).usesFunctions()).isEqualTo(command.equals("fcall"));
            assertThat(l.tryAcquire("k").remaining()).isEqualTo(2);
            assertThat(l.tryAcquire("k", 2).remaining()).isZero();
            assertThat(l.tryAcquire("k").allowed()).isFalse();
            String other = command.equals("fcall") ? "evalsha" : "fcall";
            // With functions, one more FCALL: the ping by which the store learned at connect that it may call them.
            assertThat(calls(redis, command)).as(command).isEqualTo(command.equals("fcall") ? 4 : 3);
            assertThat(calls(redis, other)).as(other).isZero();
        }
    }

    /** Calls of {@code command} (e.g. {@code fcall}, {@code function|load}) the server ran, from INFO commandstats. */
    private static long calls(RedisServer redis, String command) {
        String prefix = "cmdstat_" + command + ":calls=";
        for (String line : List.of(String.valueOf(redis.call("INFO", "commandstats")).split("\r?\n"))) {
            if (line.startsWith(prefix)) {
                return Long.parseLong(line.substring(prefix.length(), line.indexOf(',')));
            }
        }
        return 0;
    }
}
