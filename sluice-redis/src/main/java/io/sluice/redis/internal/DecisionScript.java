package io.sluice.redis.internal;

import io.sluice.Request;
import io.sluice.Rule;
import io.sluice.internal.algorithm.Arith;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

/**
 * The decision script ({@code rule.lua} and the algorithms) as every mode calls it: compiles rules for it (cached
 * per rule name), builds each call's keys and arguments (state keys, the script's time argument, a request id for
 * replay protection) and runs calls through the {@link ScriptRunner}, counting replies Redis answered from a
 * stored reply. It does not go through the {@link RedisGate}: the modes do, one gate call per logical call.
 * Thread-safe.
 */
final class DecisionScript {

    private static final Log log = Log.get(DecisionScript.class);

    private final StoreSettings settings;
    private final SluiceScript script;
    private final ScriptRunner runner;
    private final KeyLayout layout;
    private final BooleanSupplier closed;
    private final RequestIds ids = new RequestIds();
    private final String dedupTtlMillis;
    private final ConcurrentHashMap<String, RedisRule> rules = new ConcurrentHashMap<>();
    private final AtomicLong replayedReplies = new AtomicLong();

    /**
     * @param closed whether the store is closed: compiling a rule then fails, so no call starts
     */
    DecisionScript(StoreSettings settings, SluiceScript script, ScriptRunner runner, KeyLayout layout,
                   BooleanSupplier closed) {
        this.settings = settings;
        this.script = script;
        this.runner = runner;
        this.layout = layout;
        this.closed = closed;
        this.dedupTtlMillis = Long.toString(settings.dedupTtl().toMillis());
    }

    // ------------------------------------------------------------------------------------------------ rules

    /**
     * The compiled form of {@code rule}, cached per rule name. A changed rule (e.g. after
     * {@code RateLimiter.updateLimit}) replaces the entry as its next version, which remembers the previous
     * versions of each limit so the script can migrate states stored under them (see {@link RedisRule}).
     *
     * @throws IllegalStateException when the store is closed
     */
    RedisRule compiled(Rule rule) {
        if (closed.getAsBoolean()) {
            throw closedError();
        }
        RedisRule cached = rules.get(rule.name());
        if (cached != null && (cached.rule() == rule || cached.rule().equals(rule))) {
            return cached;
        }
        return rules.compute(rule.name(), (name, current) -> current != null && current.rule().equals(rule) ? current
                : RedisRule.compile(rule, script, current));
    }

    /** The rule on the key, with the keys of its limits' states. */
    DecisionCall.Target target(Rule rule, String key) {
        RedisRule compiled = compiled(rule);
        return new DecisionCall.Target(compiled, key, compiled.stateKeys(layout, key));
    }

    static IllegalStateException closedError() {
        return new IllegalStateException("the Redis store is closed");
    }

    // ------------------------------------------------------------------------------------------------ calls

    /** A decision of {@code request} over {@code targets}, all or nothing, at {@code now} (see {@link #now}). */
    DecisionCall decide(List<DecisionCall.Target> targets, Request request, String now) {
        return DecisionCall.decide(targets, request, now, requestId(), layout, dedupTtlMillis);
    }

    /** A return of {@code lease} to the limits of one target. */
    DecisionCall release(DecisionCall.Target target, long lease, String now) {
        return DecisionCall.release(target, lease, now, requestId(), layout, dedupTtlMillis);
    }

    /** An estimated charge of one target that writes ticket {@code ticketId} when admitted. */
    DecisionCall charge(DecisionCall.Target target, long estimate, String ticketId, long lifetimeMicros, String now) {
        return DecisionCall.charge(target, estimate, layout.ticketKey(target.stateKeys()[0], ticketId),
                lifetimeMicros, now, requestId(), layout, dedupTtlMillis);
    }

    /** The settlement of ticket {@code ticketId} of one target at {@code actual}. */
    DecisionCall settle(DecisionCall.Target target, String ticketId, long actual, String now) {
        return DecisionCall.settle(target, layout.ticketKey(target.stateKeys()[0], ticketId), actual, now,
                requestId(), layout, dedupTtlMillis);
    }

    /** Several requests of one target decided in order inside one call (coalesced mode). */
    DecisionCall batch(DecisionCall.Target target, List<DecisionCall.Op> ops, String now) {
        return DecisionCall.batch(target, ops, now, requestId(), layout, dedupTtlMillis);
    }

    /** Runs one call: its reply, or a {@link io.sluice.redis.RedisStoreException}. */
    CompletableFuture<List<Object>> run(ScriptCall call) {
        return runner.call(call).thenApply(reply -> counted(reply, call));
    }

    /** Runs every call in one flush; replies in call order. May throw when Redis is down. */
    List<CompletableFuture<List<Object>>> runPipelined(List<ScriptCall> calls) {
        List<CompletableFuture<List<Object>>> replies = runner.pipelined(calls);
        for (int i = 0; i < replies.size(); i++) {
            ScriptCall call = calls.get(i);
            replies.set(i, replies.get(i).thenApply(reply -> counted(reply, call)));
        }
        return replies;
    }

    private List<Object> counted(List<Object> reply, ScriptCall call) {
        if (DecisionCall.replayed(reply)) {
            replayedReplies.incrementAndGet();
            log.debug("answered a replayed call from its stored reply: {}", call);
        }
        return reply;
    }

    // ------------------------------------------------------------------------------------------------ time

    /** The client time as the script's time argument ("now,slackMillis"), or "" for Redis server time. */
    String now() {
        if (settings.clock() == null) {
            return "";
        }
        return clientTime(settings.clock().nowMicros());
    }

    /** A client clock reading as the script's time argument ("now,slackMillis"). */
    String clientTime(long now) {
        if (now < 0 || now > Arith.MAX_TIME) {
            throw new IllegalStateException("clock reading must be in [0, 2^53] microseconds since the epoch, was "
                    + now);
        }
        return now + "," + settings.clientTimeSlack().toMillis();
    }

    private String requestId() {
        return settings.deduplicate() ? ids.next() : "";
    }

    /** Replies answered from a stored reply because the same call arrived twice. */
    long replayedReplies() {
        return replayedReplies.get();
    }

    /** The key layout calls use. */
    KeyLayout layout() {
        return layout;
    }
}
