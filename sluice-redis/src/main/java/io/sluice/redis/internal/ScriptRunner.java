package io.sluice.redis.internal;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisNoScriptException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One Lua script as the store runs it, in one of two ways chosen when the store connects ({@link ScriptingChoice}):
 * as a functions library, loaded on every master ({@code FUNCTION LOAD REPLACE}) and called by {@code FCALL}; or as
 * a script, loaded on every node ({@code SCRIPT LOAD}) and called by {@code EVALSHA}. When Redis has lost it
 * ("Function not found" or NOSCRIPT: a restart without persistence, a new or promoted master without it, a
 * {@code FUNCTION FLUSH} or {@code SCRIPT FLUSH}) it is loaded again and the call is retried once. A retry cannot
 * charge twice: the first attempt ran nothing. Failures come out as {@link io.sluice.redis.RedisStoreException}s
 * ({@link FailureTranslator}).
 *
 * <p>Thread-safe: concurrent failures share one load.
 */
final class ScriptRunner {

    private static final Log log = Log.get(ScriptRunner.class);

    private final RedisPort port;
    private final SluiceScript script;
    private final String name;
    private final FailureTranslator failures;
    private final boolean functions;
    private final AtomicReference<CompletableFuture<Void>> loading = new AtomicReference<>();
    private final AtomicLong loads = new AtomicLong();

    /**
     * @param name      what error messages call the script ("Sluice script", "Sluice sync script")
     * @param functions whether to run it as a functions library ({@code FCALL}) rather than by {@code EVALSHA}
     */
    ScriptRunner(RedisPort port, SluiceScript script, String name, FailureTranslator failures, boolean functions) {
        this.port = port;
        this.script = script;
        this.name = name;
        this.failures = failures;
        this.functions = functions;
    }

    /** A runner of another script over the same connection, run the same way (functions or EVALSHA). */
    ScriptRunner sibling(SluiceScript other, String otherName) {
        return new ScriptRunner(port, other, otherName, failures, functions);
    }

    /** Whether calls go by {@code FCALL} (else {@code EVALSHA}). */
    boolean functions() {
        return functions;
    }

    /** One call: its reply, or a {@link io.sluice.redis.RedisStoreException}. */
    CompletableFuture<List<Object>> call(ScriptCall call) {
        return retryWhenLost(send(call), call);
    }

    /** Every call written together and flushed once; replies in call order. May throw when Redis is down. */
    List<CompletableFuture<List<Object>>> pipelined(List<ScriptCall> calls) {
        List<CompletableFuture<List<Object>>> replies = functions ? port.fcallPipelined(script.functionName(), calls)
                : port.evalshaPipelined(script.sha1(), calls);
        List<CompletableFuture<List<Object>>> out = new ArrayList<>(replies.size());
        for (int i = 0; i < replies.size(); i++) {
            out.add(retryWhenLost(replies.get(i), calls.get(i)));
        }
        return out;
    }

    private CompletableFuture<List<Object>> send(ScriptCall call) {
        return functions ? port.fcall(script.functionName(), call) : port.evalsha(script.sha1(), call);
    }

    /** The reply of a first attempt, or of the one retry after loading the script when Redis had lost it. */
    private CompletableFuture<List<Object>> retryWhenLost(CompletableFuture<List<Object>> attempt, ScriptCall call) {
        return attempt.handle((reply, error) -> {
            if (error == null) {
                return CompletableFuture.completedFuture(reply);
            }
            if (lost(RedisFailures.unwrap(error))) {
                return load().thenCompose(x -> send(call));
            }
            return CompletableFuture.<List<Object>>failedFuture(error);
        }).thenCompose(f -> f).handle((reply, error) -> failures.translate(reply, error, script, name));
    }

    /**
     * Whether Redis answered that it does not have the script: NOSCRIPT for {@code EVALSHA}; for {@code FCALL}
     * the error reply "Function not found", which names no function, so it can only mean this one.
     */
    private boolean lost(Throwable cause) {
        if (functions) {
            return cause instanceof RedisCommandExecutionException && cause.getMessage() != null
                    && cause.getMessage().contains("Function not found");
        }
        return cause instanceof RedisNoScriptException;
    }

    /** Loads the script (or the library) on every node that runs it; concurrent callers share one load. */
    CompletableFuture<Void> load() {
        CompletableFuture<Void> mine = new CompletableFuture<>();
        CompletableFuture<Void> current = loading.compareAndExchange(null, mine);
        if (current != null) {
            return current;
        }
        if (loads.incrementAndGet() > 1) {
            log.info("Redis at {} lost the {} ({}); loading it again", failures.where(), name, functions
                    ? "restart without persistence, a master without it, or FUNCTION FLUSH"
                    : "restart, failover or SCRIPT FLUSH");
        }
        CompletableFuture<Void> sent = functions ? port.functionLoad(script.functionLibrary())
                : port.scriptLoad(script.source());
        sent.whenComplete((x, error) -> {
            loading.set(null);
            if (error == null) {
                mine.complete(null);
            } else {
                mine.completeExceptionally(error);
            }
        });
        return mine.handle(failures::translate);
    }

    /** How many times the script was loaded, the first time included. */
    long loads() {
        return loads.get();
    }
}
