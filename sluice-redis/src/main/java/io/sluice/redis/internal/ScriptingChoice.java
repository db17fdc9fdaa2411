package io.sluice.redis.internal;

import io.sluice.redis.RedisStoreException;
import io.sluice.redis.RedisUnavailableException;
import io.sluice.redis.Scripting;

/**
 * Decides, once per store when it connects, whether its scripts run as a Redis 7 functions library ({@code FCALL})
 * or as scripts ({@code EVALSHA}), and loads the decision script the chosen way ({@link StoreSettings#scripting()}):
 *
 * <ul>
 *   <li>{@code auto}: loads the library ({@code FUNCTION LOAD REPLACE} on every master) and calls its ping function
 *       once; if Redis answers either with an error (Redis 6 does not know {@code FUNCTION}; an ACL user without
 *       {@code +function} or {@code +fcall} gets NOPERM; a server may rename or refuse the command) the store runs
 *       the script by {@code EVALSHA} instead. An outage (timeout, refused connection) is not a refusal: it fails
 *       the connect, as it would on either path.</li>
 *   <li>{@code functions}: as auto, but a refusal fails the connect, naming the reply.</li>
 *   <li>{@code eval}: {@code SCRIPT LOAD} and {@code EVALSHA}, and no {@code FUNCTION} command is sent.</li>
 * </ul>
 *
 * One line says what was chosen and why: at INFO when the store runs {@code EVALSHA} (a fallback, or asked for), at
 * DEBUG in the usual case, functions on Redis 7, so that a library user's normal start prints nothing on stderr
 * (JUL's default handler prints INFO there; LibraryLoggingIT). Stateless.
 */
final class ScriptingChoice {

    private static final Log log = Log.get(ScriptingChoice.class);

    private static final ScriptCall NO_KEYS = new ScriptCall(new String[0], new String[0]);

    private ScriptingChoice() {}

    /**
     * The decision script's runner, loaded, for the chosen way; its {@link ScriptRunner#sibling siblings} run the
     * other scripts the same way.
     *
     * @throws RedisStoreException when Redis cannot be reached, or refuses functions under {@code functions}
     */
    static ScriptRunner connect(StoreSettings settings, RedisPort port, FailureTranslator failures) {
        SluiceScript script = SluiceScript.get();
        Scripting wanted = settings.scripting();
        if (wanted != Scripting.EVAL) {
            ScriptRunner functions = new ScriptRunner(port, script, "Sluice script", failures, true);
            try {
                failures.await(functions.load());
                failures.await(port.fcall(script.pingFunction(), NO_KEYS)
                        .handle((reply, error) -> failures.translate(reply, error, script, "Sluice functions library")));
                log.debug("Redis at {}: Sluice runs its scripts as the functions library {} (FCALL; scripting={})",
                        failures.where(), script.functionName(), wanted);
                return functions;
            } catch (RedisUnavailableException e) {
                throw e;
            } catch (RedisStoreException e) {
                if (wanted == Scripting.FUNCTIONS) {
                    throw new RedisStoreException("scripting=functions, but Redis at " + failures.where()
                            + " refused the functions library (" + reason(e) + "); functions need Redis 7 and an ACL "
                            + "user allowed +function and +fcall, or use scripting=auto or eval", e);
                }
                log.info("Redis at {} refused the functions library ({}); Sluice runs its scripts by EVALSHA "
                        + "(scripting=auto)", failures.where(), reason(e));
            }
        }
        ScriptRunner eval = new ScriptRunner(port, script, "Sluice script", failures, false);
        failures.await(eval.load());
        if (wanted == Scripting.EVAL) {
            log.info("Redis at {}: Sluice runs its scripts by EVALSHA (scripting=eval)", failures.where());
        }
        return eval;
    }

    /** Redis's own reply, without the store's wording around it. */
    private static String reason(RedisStoreException e) {
        Throwable cause = RedisFailures.unwrap(e.getCause() == null ? e : e.getCause());
        return cause.getMessage();
    }
}
