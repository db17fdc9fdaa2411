package io.sluice.client;

/**
 * The server's rule files define the rule under the same name with other limits, mode or failure policy. The
 * message names the rule and shows both definitions. Nothing was decided: a rule means one thing on both
 * sides, or the call fails. Never decided by a failure policy.
 */
public class RuleMismatchException extends RemoteStoreException {

    public RuleMismatchException(String message) {
        super(message);
    }
}
