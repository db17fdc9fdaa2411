package io.sluice.redis.internal;

import io.lettuce.core.RedisURI;
import io.sluice.Clock;
import io.sluice.SluiceListener;
import io.sluice.redis.Scripting;
import java.time.Duration;
import java.util.List;

/**
 * A validated {@link io.sluice.redis.RedisStore} configuration. Immutable.
 *
 * @param uris        the Redis URIs: one for standalone or Sentinel, the seeds for a cluster
 * @param cluster     whether {@code uris} are cluster seeds
 * @param prefix      namespace of every key
 * @param timeout     bound on every Redis command and connection attempt
 * @param clock       client time, or null for Redis server time
 * @param deduplicate whether calls carry request ids so a replayed call is not charged twice; only tests that
 *                    demonstrate the double charge turn it off
 * @param clientTimeSlack with client time, how much longer than the state's remaining lifetime a key lives on
 *                    the server's clock
 * @param breakerFailures consecutive failed calls (timeouts, connection errors) that open the circuit breaker
 * @param breakerCoolDown how long an open breaker fails calls fast before it lets one probe through
 * @param listener    told of store calls, breaker transitions, leases and syncs
 * @param cacheDenials whether exact mode answers denials it has just learned from Redis locally while Redis would
 *                    still deny (see {@link DenialCache})
 * @param scripting   functions, the script, or whichever the server allows (see {@link ScriptingChoice})
 */
public record StoreSettings(List<RedisURI> uris, boolean cluster, String prefix, Duration timeout, Clock clock,
                            boolean deduplicate, Duration clientTimeSlack, int breakerFailures,
                            Duration breakerCoolDown, SluiceListener listener, boolean cacheDenials,
                            Scripting scripting) {

    /** As the canonical constructor, with {@link Scripting#AUTO} (the builder's default). */
    public StoreSettings(List<RedisURI> uris, boolean cluster, String prefix, Duration timeout, Clock clock,
                         boolean deduplicate, Duration clientTimeSlack, int breakerFailures,
                         Duration breakerCoolDown, SluiceListener listener, boolean cacheDenials) {
        this(uris, cluster, prefix, timeout, clock, deduplicate, clientTimeSlack, breakerFailures, breakerCoolDown,
                listener, cacheDenials, Scripting.AUTO);
    }

    /** As the canonical constructor, with cached denials on (the builder's default). */
    public StoreSettings(List<RedisURI> uris, boolean cluster, String prefix, Duration timeout, Clock clock,
                         boolean deduplicate, Duration clientTimeSlack, int breakerFailures,
                         Duration breakerCoolDown, SluiceListener listener) {
        this(uris, cluster, prefix, timeout, clock, deduplicate, clientTimeSlack, breakerFailures, breakerCoolDown,
                listener, true);
    }

    /** Default {@link #breakerFailures}. */
    public static final int DEFAULT_BREAKER_FAILURES = 3;
    /** Default {@link #breakerCoolDown}. */
    public static final Duration DEFAULT_BREAKER_COOL_DOWN = Duration.ofSeconds(2);

    public StoreSettings(List<RedisURI> uris, boolean cluster, String prefix, Duration timeout, Clock clock,
                         boolean deduplicate, Duration clientTimeSlack) {
        this(uris, cluster, prefix, timeout, clock, deduplicate, clientTimeSlack, DEFAULT_BREAKER_FAILURES,
                DEFAULT_BREAKER_COOL_DOWN, SluiceListener.NONE);
    }

    /** Default {@link #clientTimeSlack}: one second, for client clocks that track real time. */
    public static final Duration DEFAULT_CLIENT_TIME_SLACK = Duration.ofSeconds(1);

    public StoreSettings(List<RedisURI> uris, boolean cluster, String prefix, Duration timeout, Clock clock,
                         boolean deduplicate) {
        this(uris, cluster, prefix, timeout, clock, deduplicate, DEFAULT_CLIENT_TIME_SLACK);
    }

    private static final Duration MAX_TIMEOUT = Duration.ofHours(1);

    public StoreSettings {
        uris = List.copyOf(uris);
        checkPrefix(prefix);
        checkTimeout(timeout);
        checkBreaker(breakerFailures, breakerCoolDown);
        if (listener == null) {
            throw new IllegalArgumentException("listener must not be null");
        }
        if (scripting == null) {
            throw new IllegalArgumentException("scripting must not be null");
        }
    }

    /**
     * The reconnect delay a store's own client resources use for a breaker that cools down for
     * {@code breakerCoolDown}: from 1 ms, doubling, up to the cool-down within [100 ms, 1 s]. For a caller that
     * builds the client resources it gives the store (the server, which runs the store on its own event loops),
     * so that its store reconnects as a store of its own resources would.
     */
    public static io.lettuce.core.resource.Delay reconnectDelay(Duration breakerCoolDown) {
        return Ports.reconnectDelay(breakerCoolDown);
    }

    /** @throws IllegalArgumentException unless failures in [1, 1000] and the cool-down in [1 ms, 1 h] */
    public static void checkBreaker(int failures, Duration coolDown) {
        if (failures < 1 || failures > 1000) {
            throw new IllegalArgumentException("breaker failures must be in [1, 1000], was " + failures);
        }
        if (coolDown == null || coolDown.compareTo(Duration.ofMillis(1)) < 0 || coolDown.compareTo(MAX_TIMEOUT) > 0) {
            throw new IllegalArgumentException("breaker cool_down must be between 1ms and " + MAX_TIMEOUT + ", was "
                    + coolDown);
        }
    }

    /**
     * How long a call's reply is remembered under its request id. Lettuce re-sends a call only until it times
     * the call out, which happens between one timeout and one timer tick (100 ms) after the call was first
     * written; twice the timeout plus a second outlasts that and the re-sent call's trip (see
     * docs/redis-script-protocol.md, "Replays").
     */
    public Duration dedupTtl() {
        return timeout.multipliedBy(2).plusSeconds(1);
    }

    /**
     * Lettuce times commands out on the client resources' hashed-wheel timer, whose tick is 100 ms: a command
     * is completed with its timeout error up to one tick after the timeout.
     */
    public static final Duration LETTUCE_TIMER_TICK = Duration.ofMillis(100);

    /** What {@link #awaitBound} allows beyond the timeout and the timer tick: thread scheduling, a GC pause. */
    static final Duration AWAIT_SLACK = Duration.ofMillis(200);

    /**
     * How long a synchronous caller waits for a store future: one timeout, one timer tick and
     * {@link #AWAIT_SLACK}. Lettuce completes a command's future when its timeout expires (a tick late at most),
     * so normally this is only a backstop and the caller sees Lettuce's own timeout; it binds when a call
     * chains commands (the script reload after NOSCRIPT, which runs only after Redis answered) or a mode queues
     * behind another call. A caller that gives up here gets a {@link io.sluice.redis.RedisUnavailableException}
     * (so the rule's failure policy applies) while the command may still be written and run later: once at
     * most, by its request id (docs/failure-policies.md, "What a timeout leaves behind").
     */
    public Duration awaitBound() {
        return timeout.plus(LETTUCE_TIMER_TICK).plus(AWAIT_SLACK);
    }

    /**
     * The longest a call of up to three commands (EVALSHA, SCRIPT LOAD after NOSCRIPT, EVALSHA again; or FCALL,
     * FUNCTION LOAD, FCALL) can take
     * before Lettuce completes it: after that a circuit breaker's probe is presumed lost.
     */
    public Duration callLimit() {
        return timeout.multipliedBy(3).plusSeconds(1);
    }

    /** The shortest time a connection attempt is given, whatever the command timeout: see {@link #connectTimeout}. */
    public static final Duration MIN_CONNECT_TIMEOUT = Duration.ofSeconds(1);

    /**
     * How long a connection attempt and its handshake (HELLO, AUTH, SELECT; and a Sentinel lookup) may take:
     * the command timeout, but at least {@link #MIN_CONNECT_TIMEOUT}. A sub-second command timeout is a choice
     * about how long a decision may wait; it must not make a store that starts in a cold or busy JVM fail to
     * connect at all. A connection lost later is re-established in the background, so this bounds no call.
     */
    public static Duration connectTimeout(Duration commandTimeout) {
        return commandTimeout.compareTo(MIN_CONNECT_TIMEOUT) < 0 ? MIN_CONNECT_TIMEOUT : commandTimeout;
    }

    /** {@link #connectTimeout(Duration)} of this store's timeout. */
    public Duration connectTimeout() {
        return connectTimeout(timeout);
    }

    /** @throws IllegalArgumentException unless 1 to 64 characters without braces or whitespace */
    public static String checkPrefix(String prefix) {
        if (prefix == null || prefix.isEmpty() || prefix.length() > 64) {
            throw new IllegalArgumentException("prefix must be 1 to 64 characters, was "
                    + (prefix == null ? "null" : "'" + prefix + "'"));
        }
        for (int i = 0; i < prefix.length(); i++) {
            char c = prefix.charAt(i);
            if (c == '{' || c == '}' || Character.isWhitespace(c)) {
                throw new IllegalArgumentException("prefix must not contain '{', '}' or whitespace (braces would "
                        + "change the keys' hash slots), was '" + prefix + "'");
            }
        }
        String problem = io.sluice.Text.problem(prefix);
        if (problem != null) {
            throw new IllegalArgumentException("prefix " + problem);
        }
        return prefix;
    }

    /** @throws IllegalArgumentException unless between 1 ms and 1 hour */
    public static Duration checkTimeout(Duration timeout) {
        if (timeout == null || timeout.compareTo(Duration.ofMillis(1)) < 0 || timeout.compareTo(MAX_TIMEOUT) > 0) {
            throw new IllegalArgumentException("timeout must be between 1ms and " + MAX_TIMEOUT + ", was " + timeout);
        }
        return timeout;
    }
}
