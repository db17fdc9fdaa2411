package io.sluice.server;

import io.sluice.Mode;
import io.sluice.Rule;

/**
 * The mode the server enforces its rules in when a rule does not choose its own ({@code --redis-mode} and its
 * options): applied to the rules of the server's rule files that set no {@code mode}, to limits addressed alone,
 * and to envoy limits. Where the mode cannot run a rule (synced runs only the window counters, leased no
 * reservations; {@link Mode#LEASABLE}, {@link Mode#SYNCABLE}), the rule stays exact and the server says so at
 * start ({@link RuleSet#notInDefaultMode}). Only a Redis store distinguishes modes; the in-memory store decides
 * every mode exactly.
 *
 * @param mode the default; {@link Mode#exact()} changes nothing
 */
record DefaultMode(Mode mode) {

    /** The library's default: every rule exact unless it says otherwise. */
    static final DefaultMode EXACT = new DefaultMode(Mode.exact());

    DefaultMode {
        if (mode == null) {
            throw new IllegalArgumentException("the default mode must not be null");
        }
    }

    /** {@code rule} in this mode, or {@code rule} itself when the mode cannot run it. */
    Rule apply(Rule rule) {
        if (mode.kind() == Mode.Kind.EXACT || rule.mode().equals(mode)) {
            return rule;
        }
        try {
            return rule.withMode(mode);
        } catch (IllegalArgumentException e) {
            return rule;
        }
    }
}
