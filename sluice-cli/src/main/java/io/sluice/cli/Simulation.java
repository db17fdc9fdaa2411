package io.sluice.cli;

import io.sluice.Decision;
import io.sluice.Limit;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.Store;
import io.sluice.rules.RuleFile;
import io.sluice.rules.RuleFileException;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One rules file replaying a trace on its own store: a {@link RateLimiter} per rule, all on one store whose
 * clock is the trace's time. Lines are applied in order on one thread.
 */
final class Simulation implements AutoCloseable {

    /** Prefix of the rule a trace line means by {@code "limit": NAME}: a rule of that one limit. */
    static final String LIMIT_RULE_PREFIX = "limit:";

    /** {@code acquire} without {@code max_wait_ms}: the limiter treats any wait this long as unbounded. */
    private static final Duration UNBOUNDED = ChronoUnit.FOREVER.getDuration();

    /** What one line did: a decision, or for {@code release} whether the lease was held. */
    record Outcome(Rule rule, Decision decision, boolean released) {}

    private final RuleFile rules;
    private final String traceSource;
    private final Store store;
    private final Map<String, Limit> limits;
    /** Limiters of the file's rules, by rule name. */
    private final Map<String, RateLimiter> ruleLimiters = new HashMap<>();
    /** Limiters of one-limit rules ({@code "limit": NAME} lines), by limit name. */
    private final Map<String, RateLimiter> limitLimiters = new HashMap<>();
    private long nowMicros;

    /** @throws UsageException when the store cannot be opened (see {@link ReplayStore#open}) */
    Simulation(RuleFile rules, ReplayStore stores, String traceSource) throws UsageException {
        this.rules = rules;
        this.traceSource = traceSource;
        this.limits = new LinkedHashMap<>(rules.limits());
        this.store = stores.open(() -> nowMicros);
    }

    /** The rules file's name. */
    String source() {
        return rules.source();
    }

    /** Applies one trace line at its time. */
    Outcome apply(TraceLine line) throws InputException {
        nowMicros = line.timeMicros();
        if (line.op() == TraceOp.SET_LIMIT) {
            setLimit(line);
            return new Outcome(null, null, false);
        }
        RateLimiter limiter = limiterFor(line);
        Rule rule = limiter.rule();
        try {
            switch (line.op()) {
                case TRY:
                    return new Outcome(rule, limiter.tryAcquire(line.key(), line.permits()), false);
                case TRY_AT_MOST:
                    return new Outcome(rule, limiter.tryAcquireAtMost(line.key(), line.permits()), false);
                case ACQUIRE: {
                    Duration maxWait = line.maxWaitMicros() == Long.MAX_VALUE ? UNBOUNDED
                            : Duration.ofNanos(line.maxWaitMicros() * 1_000);
                    return new Outcome(rule, limiter.reserve(line.key(), line.permits(), maxWait), false);
                }
                case PEEK:
                    return new Outcome(rule, limiter.peek(line.key(), line.permits()), false);
                case RELEASE:
                    return new Outcome(rule, null, limiter.release(line.key(), line.lease()));
                default:
                    limiter.reset(line.key());
                    return new Outcome(rule, null, false);
            }
        } catch (IllegalArgumentException e) {
            // The limiter refuses what no rule could grant, e.g. more permits than a limit's capacity.
            String message = e.getMessage();
            throw InputException.at(traceSource, line.line(), message.startsWith("permits") ? "permits" : "",
                    message);
        }
    }

    /** The limiter for the line's rule, made on first use from the limits as they are now. */
    private RateLimiter limiterFor(TraceLine line) throws InputException {
        boolean byRule = line.rule() != null;
        RateLimiter limiter = byRule ? ruleLimiters.get(line.rule()) : limitLimiters.get(line.limit());
        if (limiter != null) {
            return limiter;
        }
        Rule rule;
        if (byRule) {
            Rule defined = rules.rules().get(line.rule());
            if (defined == null) {
                throw InputException.at(traceSource, line.line(), "rule", "unknown rule \"" + line.rule() + "\" in "
                        + rules.source() + (rules.rules().isEmpty() ? ", which defines no rules"
                        : "; it defines " + String.join(", ", rules.rules().keySet())));
            }
            List<Limit> current = new ArrayList<>();
            for (Limit l : defined.limits()) {
                current.add(limits.get(l.name()));
            }
            // The rule's shadow limits watch here too, and its lockout locks out; its mode does not apply (replay
            // decides exactly).
            rule = Rule.of(line.rule(), current).withShadow(defined.shadow().toArray(String[]::new))
                    .withLockout(defined.lockout());
        } else {
            rule = Rule.of(LIMIT_RULE_PREFIX + line.limit(), knownLimit(line));
        }
        limiter = RateLimiter.builder(rule).store(store).build();
        (byRule ? ruleLimiters : limitLimiters).put(byRule ? line.rule() : line.limit(), limiter);
        return limiter;
    }

    /** {@code set_limit}: the changed limit replaces the old one in every rule that holds it, state kept. */
    private void setLimit(TraceLine line) throws InputException {
        Limit changed;
        try {
            changed = RuleFile.changeLimit(knownLimit(line), line.params(), traceSource, line.line(), "params");
        } catch (RuleFileException e) {
            throw InputException.at(traceSource, line.line(), e.field(), e.problem());
        }
        limits.put(changed.name(), changed);
        List<RateLimiter> affected = new ArrayList<>(ruleLimiters.values());
        affected.addAll(limitLimiters.values());
        for (RateLimiter limiter : affected) {
            if (limiter.rule().limit(changed.name()) != null) {
                try {
                    limiter.updateLimit(changed);
                } catch (IllegalArgumentException e) {
                    throw InputException.at(traceSource, line.line(), "params", e.getMessage());
                }
            }
        }
    }

    private Limit knownLimit(TraceLine line) throws InputException {
        Limit limit = limits.get(line.limit());
        if (limit == null) {
            throw InputException.at(traceSource, line.line(), "limit", "unknown limit \"" + line.limit() + "\" in "
                    + rules.source() + "; it defines " + String.join(", ", limits.keySet()));
        }
        return limit;
    }

    @Override
    public void close() {
        store.close();
    }
}
