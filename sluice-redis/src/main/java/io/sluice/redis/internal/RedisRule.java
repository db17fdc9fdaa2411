package io.sluice.redis.internal;

import io.sluice.Limit;
import io.sluice.Rule;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * A rule resolved once for the script: each limit's algorithm, parameter words, fingerprint and escaped name,
 * and the previous versions of each limit this store has seen in this process, which the script needs to
 * migrate a state stored under one of them. Immutable.
 *
 * <p>Versions. {@code RateLimiter.updateLimit} reaches the store as a rule with the same name and a changed
 * limit; the store compiles it {@link #compile(Rule, SluiceScript, RedisRule) from the previous compiled rule},
 * which carries, per limit name, the distinct versions seen, most recent first. A state in Redis stored under
 * one of them is migrated from it, as {@code MemoryStore} migrates from the rule version an entry was written
 * under; a state under a fingerprint the store never saw is dropped (a process that never saw the old version
 * resets such keys).
 *
 * <p>A removed lockout. A version without a lockout compiled after one with a lockout deletes the lockout's
 * key of every key it decides in the single form, for as long as a state written under the old lockout can live
 * (its {@code within} or {@code for}, whichever is longer, and a minute for clocks and TTL slack): the memory
 * store drops a key's lockout state when it moves the key to a version without one, so adding the lockout back
 * starts afresh in both stores. Only a process that saw the removal deletes, as only it migrates in memory.
 */
final class RedisRule {

    /** Previous versions of one limit remembered (and sent to the script) at most. */
    static final int MAX_PREVIOUS = 8;

    /** Limit names remembered at most; names no longer in the rule are forgotten first. */
    static final int MAX_NAMES = 64;

    /** One version of a limit as the script sees it. */
    record Version(String algorithm, String fingerprint, String words) {
        static Version of(Limit limit) {
            String words = LimitParams.encode(limit);
            return new Version(limit.algorithm(), LimitParams.fingerprint(limit.algorithm(), words), words);
        }
    }

    private static final String[] NONE = new String[0];

    private final Rule rule;
    private final Version[] versions;
    private final String[] limitNames;
    /** Per limit: the boundary table of a calendar_window limit (its words vary with the clock), else null. */
    private final CalendarTable[] calendars;
    /** Per limit: the script's tail arguments for its previous versions (index, fingerprint, words)*. */
    private final String[][] previousArgs;
    /** Per limit name ever seen (bounded): distinct versions, most recent first, the current one included. */
    private final Map<String, List<Version>> seen;
    /** Whether this version deletes a removed lockout's state, until {@link #dropLockoutUntilNanos}. */
    private final boolean dropsLockout;
    private final long dropLockoutUntilNanos;

    /** How long after its removal a lockout's state is deleted, beyond its longest period. */
    private static final long DROP_SLACK_NANOS = 60_000_000_000L;

    private RedisRule(Rule rule, Map<String, List<Version>> seen, RedisRule previous) {
        this.rule = rule;
        io.sluice.Lockout removed = previous == null || rule.lockout() != null ? null : previous.rule.lockout();
        if (removed != null) {
            long longest = Math.max(removed.within().toNanos(), removed.duration().toNanos());
            this.dropsLockout = true;
            this.dropLockoutUntilNanos = System.nanoTime() + longest + DROP_SLACK_NANOS;
        } else {
            boolean carried = previous != null && rule.lockout() == null && previous.dropsLockout;
            this.dropsLockout = carried;
            this.dropLockoutUntilNanos = carried ? previous.dropLockoutUntilNanos : 0;
        }
        List<Limit> limits = rule.limits();
        int n = limits.size();
        this.versions = new Version[n];
        this.limitNames = new String[n];
        this.previousArgs = new String[n][];
        this.calendars = new CalendarTable[n];
        Map<String, List<Version>> history = new LinkedHashMap<>(seen);
        for (int i = 0; i < n; i++) {
            Limit limit = limits.get(i);
            Version current = Version.of(limit);
            versions[i] = current;
            if (limit instanceof io.sluice.CalendarWindow c) {
                calendars[i] = new CalendarTable(c, current.words());
            }
            limitNames[i] = limit.name();
            List<Version> versionsOfName = new ArrayList<>();
            versionsOfName.add(current);
            List<Version> before = history.remove(limit.name());
            if (before != null) {
                for (Version v : before) {
                    if (versionsOfName.size() > MAX_PREVIOUS) {
                        break;
                    }
                    if (versionsOfName.stream().noneMatch(w -> w.fingerprint().equals(v.fingerprint()))) {
                        versionsOfName.add(v);
                    }
                }
            }
            history.put(limit.name(), List.copyOf(versionsOfName)); // re-inserted last: most recent names last
        }
        forgetOldNames(history, limits.stream().map(Limit::name).collect(Collectors.toSet()));
        this.seen = history;
        for (int i = 0; i < n; i++) {
            previousArgs[i] = previousArgs(history.get(limitNames[i]), versions[i]);
        }
    }

    /** Drops the least recently seen names that are not in the rule until at most {@link #MAX_NAMES} remain. */
    private static void forgetOldNames(Map<String, List<Version>> history, Set<String> inRule) {
        for (Iterator<String> it = history.keySet().iterator(); history.size() > MAX_NAMES && it.hasNext(); ) {
            if (!inRule.contains(it.next())) {
                it.remove();
            }
        }
    }

    /** The previous versions worth sending: of the same algorithm (a state of another one is dropped anyway). */
    private static String[] previousArgs(List<Version> versionsOfName, Version current) {
        List<String> out = new ArrayList<>();
        for (Version v : versionsOfName) {
            if (!v.fingerprint().equals(current.fingerprint()) && v.algorithm().equals(current.algorithm())) {
                out.add(v.fingerprint());
                out.add(v.words());
            }
        }
        return out.isEmpty() ? NONE : out.toArray(NONE);
    }

    /**
     * Resolves {@code rule} against the script, with no previous versions.
     *
     * @throws IllegalArgumentException when a limit's algorithm has no Lua port in {@code script}
     */
    static RedisRule compile(Rule rule, SluiceScript script) {
        return compile(rule, script, null);
    }

    /**
     * Resolves {@code rule} against the script as the next version of {@code previous} (a compiled rule of the
     * same name, or null): the versions {@code previous} knew stay known.
     *
     * @throws IllegalArgumentException when a limit's algorithm has no Lua port in {@code script}
     */
    static RedisRule compile(Rule rule, SluiceScript script, RedisRule previous) {
        for (Limit limit : rule.limits()) {
            if (!script.supports(limit.algorithm())) {
                throw new IllegalArgumentException("algorithm " + limit.algorithm() + " has no Redis script yet (limit '"
                        + limit.name() + "' of rule '" + rule.name() + "'); the Redis store runs "
                        + script.algorithms().stream().sorted().toList());
            }
        }
        return new RedisRule(rule, previous == null ? Map.of() : previous.seen, previous);
    }

    Rule rule() {
        return rule;
    }

    int size() {
        return versions.length;
    }

    String algorithm(int i) {
        return versions[i].algorithm();
    }

    String params(int i) {
        return versions[i].words();
    }

    /**
     * The words limit {@code i} sends in a call whose ARGV[4] is {@code now}: {@link #params(int)}, and for a
     * {@code calendar_window} the boundaries around the client's clock after them (the fingerprint covers only
     * the fixed words).
     */
    String params(int i, String now) {
        return calendars[i] == null ? versions[i].words() : calendars[i].words(now);
    }

    String fingerprint(int i) {
        return versions[i].fingerprint();
    }

    String limitName(int i) {
        return limitNames[i];
    }

    /**
     * The previous versions of limit {@code i} (same algorithm, most recent first, at most
     * {@link #MAX_PREVIOUS}) as alternating fingerprint and parameter words; empty in the common case.
     */
    String[] previous(int i) {
        return previousArgs[i];
    }

    /**
     * The state key of each limit on {@code key}, in limit order, then the lockout's key when the rule has a
     * lockout ({@link KeyLayout#lockoutKey}).
     */
    String[] stateKeys(KeyLayout layout, String key) {
        String base = layout.base(rule.name(), key);
        String[] keys = new String[limitNames.length + (rule.lockout() == null ? 0 : 1)];
        for (int i = 0; i < limitNames.length; i++) {
            keys[i] = base + ":" + KeyLayout.escape(limitNames[i]);
        }
        if (rule.lockout() != null) {
            keys[limitNames.length] = layout.lockoutKey(rule.name(), key);
        }
        return keys;
    }

    /**
     * Whether a call of this rule deletes the lockout state a removed lockout left (see the class Javadoc): a
     * version compiled after one with a lockout, within the time such a state can live. The clock read here
     * bounds a cost, not a decision.
     */
    boolean dropsLockout() {
        return dropsLockout && System.nanoTime() - dropLockoutUntilNanos < 0;
    }

    /** The script's lockout words, "after within for" (microseconds), or null when the rule has no lockout. */
    String lockoutWords() {
        io.sluice.Lockout l = rule.lockout();
        return l == null ? null : l.after() + " " + l.withinMicros() + " " + l.durationMicros();
    }
}
