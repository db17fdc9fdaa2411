package io.sluice.redis.internal;

import io.lettuce.core.RedisNoScriptException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One Lua script as the store runs it: loaded on every node ({@code SCRIPT LOAD}) when the store connects, called
 * by {@code EVALSHA}, and loaded again when Redis answers NOSCRIPT (Redis restarted, failed over, or ran
 * {@code SCRIPT FLUSH}), after which the call is retried once. A retry cannot charge twice: the first attempt ran
 * nothing. Failures come out as {@link io.sluice.redis.RedisStoreException}s ({@link FailureTranslator}).
 *
 * <p>Thread-safe: concurrent NOSCRIPT failures share one load.
 */
final class ScriptRunner {

    private static final Log log = Log.get(ScriptRunner.class);

    private final RedisPort port;
    private final SluiceScript script;
    private final String name;
    private final FailureTranslator failures;
    private final AtomicReference<CompletableFuture<Void>> loading = new AtomicReference<>();
    private final AtomicLong loads = new AtomicLong();

    /**
     * @param name what error messages call the script ("Sluice script", "Sluice sync script")
     */
    ScriptRunner(RedisPort port, SluiceScript script, String name, FailureTranslator failures) {
        this.port = port;
        this.script = script;
        this.name = name;
        this.failures = failures;
    }

    /** One call: its reply, or a {@link io.sluice.redis.RedisStoreException}. */
    CompletableFuture<List<Object>> call(ScriptCall call) {
        return retryOnNoScript(port.evalsha(script.sha1(), call), call);
    }

    /** Every call written together and flushed once; replies in call order. May throw when Redis is down. */
    List<CompletableFuture<List<Object>>> pipelined(List<ScriptCall> calls) {
        List<CompletableFuture<List<Object>>> replies = port.evalshaPipelined(script.sha1(), calls);
        List<CompletableFuture<List<Object>>> out = new ArrayList<>(replies.size());
        for (int i = 0; i < replies.size(); i++) {
            out.add(retryOnNoScript(replies.get(i), calls.get(i)));
        }
        return out;
    }

    /** The reply of a first attempt, or of the one retry after loading the script when Redis had lost it. */
    private CompletableFuture<List<Object>> retryOnNoScript(CompletableFuture<List<Object>> attempt,
                                                            ScriptCall call) {
        return attempt.handle((reply, error) -> {
            if (error == null) {
                return CompletableFuture.completedFuture(reply);
            }
            if (RedisFailures.unwrap(error) instanceof RedisNoScriptException) {
                return load().thenCompose(x -> port.evalsha(script.sha1(), call));
            }
            return CompletableFuture.<List<Object>>failedFuture(error);
        }).thenCompose(f -> f).handle((reply, error) -> failures.translate(reply, error, script, name));
    }

    /** Loads the script on every node; concurrent callers share one load. */
    CompletableFuture<Void> load() {
        CompletableFuture<Void> mine = new CompletableFuture<>();
        CompletableFuture<Void> current = loading.compareAndExchange(null, mine);
        if (current != null) {
            return current;
        }
        if (loads.incrementAndGet() > 1) {
            log.info("Redis at {} lost the {} (restart, failover or SCRIPT FLUSH); loading it again",
                    failures.where(), name);
        }
        port.scriptLoad(script.source()).whenComplete((x, error) -> {
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
