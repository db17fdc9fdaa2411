package io.sluice.cli;

import io.sluice.Charge;
import io.sluice.Decision;
import io.sluice.Limit;
import io.sluice.Request;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.Settlement;
import io.sluice.Store;
import io.sluice.Tier;
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

    /**
     * What one line did: a decision, or for {@code release} whether the lease was held. {@code targetRules}: for
     * {@code try_all}, the rule of each target in the line's order (and {@code rule} the first); else empty.
     * {@code settlement}: for {@code settle}, what it did; else null.
     */
    record Outcome(Rule rule, Decision decision, boolean released, List<Rule> targetRules, Settlement settlement) {
        Outcome(Rule rule, Decision decision, boolean released) {
            this(rule, decision, released, List.of(), null);
        }

        Outcome(Rule rule, Decision decision, boolean released, List<Rule> targetRules) {
            this(rule, decision, released, targetRules, null);
        }
    }

    private final RuleFile rules;
    private final String traceSource;
    private final Store store;
    private final Map<String, Limit> limits;
    /** Limiters of the file's rules, by rule name. */
    private final Map<String, RateLimiter> ruleLimiters = new HashMap<>();
    /** Limiters of one-limit rules ({@code "limit": NAME} lines), by limit name. */
    private final Map<String, RateLimiter> limitLimiters = new HashMap<>();
    private final ReplayTickets tickets = new ReplayTickets();
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
        if (line.op() == TraceOp.TRY_ALL) {
            return tryAll(line);
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
                case CHARGE:
                    return charge(limiter, line);
                case SETTLE:
                    return settle(limiter, line);
                default:
                    limiter.reset(line.key());
                    return new Outcome(rule, null, false);
            }
        } catch (IllegalArgumentException e) {
            // The limiter refuses what no rule could grant, e.g. more permits than a limit's capacity.
            String message = e.getMessage();
            throw InputException.at(traceSource, line.line(), message.startsWith("permits") ? "permits"
                    : message.startsWith("estimate") ? "estimate" : "", message);
        } catch (UnsupportedOperationException e) {
            // A charge under a limit (or, in Redis, a mode) that cannot settle: refused before anything is charged.
            throw InputException.at(traceSource, line.line(), line.rule() != null ? "rule" : "limit", e.getMessage());
        }
    }

    /**
     * {@code charge}: {@code tryCharge} of the estimate; an admitted charge's ticket is kept under the line's
     * name until a {@code settle} line takes it or it expires. A name still open for the rule and key is an
     * error, as a ticket id still open is in the store.
     */
    private Outcome charge(RateLimiter limiter, TraceLine line) throws InputException {
        TraceLine.TicketRef t = line.ticket();
        String scope = scope(line);
        ReplayTickets.Open open = tickets.find(scope, line.key(), t.name(), nowMicros);
        if (open != null) {
            throw InputException.at(traceSource, line.line(), "ticket", "ticket \"" + t.name() + "\" of key \""
                    + line.key() + "\" is still open (charged on line " + open.line() + "); a ticket name must be"
                    + " unique per rule and key until its ticket is settled or expires");
        }
        Charge charge = limiter.tryCharge(line.key(), line.permits(), Duration.ofNanos(t.lifetimeMicros() * 1_000));
        if (charge.allowed()) {
            tickets.add(scope, line.key(), t.name(), new ReplayTickets.Open(charge.ticket(),
                    nowMicros + t.lifetimeMicros(), line.line()));
        }
        return new Outcome(limiter.rule(), charge.decision(), false);
    }

    /**
     * {@code settle}: the named ticket settled at the line's actual cost. A name with no open ticket (its charge
     * was rejected, it was settled already, or it expired) settles nothing, as the store answers for such a
     * ticket.
     */
    private Outcome settle(RateLimiter limiter, TraceLine line) {
        ReplayTickets.Open open = tickets.take(scope(line), line.key(), line.ticket().name(), nowMicros);
        Settlement s = open == null ? Settlement.unknown() : limiter.settle(open.ticket(), line.ticket().actual());
        return new Outcome(limiter.rule(), null, false, List.of(), s);
    }

    /** The rule (or one-limit rule) a line names, as ticket names are scoped. */
    private static String scope(TraceLine line) {
        return line.rule() != null ? line.rule() : LIMIT_RULE_PREFIX + line.limit();
    }

    /**
     * {@code try_all}: one {@link Store#decideTogether} over the targets, each under its rule as it is now
     * (the rules' limiters hold them, {@code set_limit} included).
     */
    private Outcome tryAll(TraceLine line) throws InputException {
        List<Store.Target> targets = new ArrayList<>(line.targets().size());
        List<Rule> targetRules = new ArrayList<>(line.targets().size());
        for (int i = 0; i < line.targets().size(); i++) {
            TraceLine.Target t = line.targets().get(i);
            Rule rule = limiterFor(t.rule(), t.limit(), line, sameRule(line) ? "" : "targets[" + i + "].").rule();
            targets.add(new Store.Target(rule, t.key()));
            targetRules.add(rule);
        }
        try {
            Decision d = store.decideTogether(targets, Request.tryAcquire(line.permits()));
            return new Outcome(targetRules.get(0), d, false, List.copyOf(targetRules));
        } catch (IllegalArgumentException e) {
            // A repeated target, permits beyond a rule's capacity, or (Redis Cluster) keys in different slots.
            String message = e.getMessage();
            throw InputException.at(traceSource, line.line(), message.startsWith("permits") ? "permits"
                    : sameRule(line) ? "keys" : "targets", message);
        }
    }

    /** Whether every target of a {@code try_all} line names the same rule or limit (as {@code keys} do). */
    private static boolean sameRule(TraceLine line) {
        TraceLine.Target first = line.targets().get(0);
        return line.targets().stream().allMatch(t -> java.util.Objects.equals(t.rule(), first.rule())
                && java.util.Objects.equals(t.limit(), first.limit()));
    }

    /** The limiter for the line's rule, made on first use from the limits as they are now. */
    private RateLimiter limiterFor(TraceLine line) throws InputException {
        return limiterFor(line.rule(), line.limit(), line, "");
    }

    /**
     * The limiter of {@code ruleName} (or, when null, of a rule of the one limit {@code limitName}); {@code at}
     * prefixes the field an unknown name is reported at ({@code targets[1].} for a target).
     */
    private RateLimiter limiterFor(String ruleName, String limitName, TraceLine line, String at)
            throws InputException {
        boolean byRule = ruleName != null;
        RateLimiter limiter = byRule ? ruleLimiters.get(ruleName) : limitLimiters.get(limitName);
        if (limiter != null) {
            return limiter;
        }
        Rule rule;
        if (byRule) {
            Rule defined = rules.rules().get(ruleName);
            if (defined == null) {
                throw InputException.at(traceSource, line.line(), at + "rule", "unknown rule \"" + ruleName + "\" in "
                        + rules.source() + (rules.rules().isEmpty() ? ", which defines no rules"
                        : "; it defines " + String.join(", ", rules.rules().keySet())));
            }
            List<Limit> current = new ArrayList<>();
            for (Limit l : defined.limits()) {
                current.add(limits.get(l.name()));
            }
            // The rule's shadow limits watch here too, its lockout locks out, and its tiers decide their keys with the limits as they
            // are now; its mode does not apply (replay decides exactly).
            List<Tier> tiers = new ArrayList<>();
            for (Tier t : defined.tiers()) {
                Tier.Builder b = Tier.named(t.name()).keys(t.keys());
                tiers.add(switch (t.kind()) {
                    case LIMITS -> b.limits(t.limits().stream().map(l -> limits.get(l.name())).toList());
                    case UNLIMITED -> b.unlimited();
                    case BLOCKED -> b.blocked();
                });
            }
            rule = Rule.of(ruleName, current).withShadow(defined.shadow().toArray(String[]::new))
                    .withLockout(defined.lockout()).withTiers(tiers);
        } else {
            rule = Rule.of(LIMIT_RULE_PREFIX + limitName, knownLimit(limitName, line, at + "limit"));
        }
        limiter = RateLimiter.builder(rule).store(store).build();
        (byRule ? ruleLimiters : limitLimiters).put(byRule ? ruleName : limitName, limiter);
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
            if (holds(limiter.rule(), changed.name())) {
                try {
                    limiter.updateLimit(changed);
                } catch (IllegalArgumentException e) {
                    throw InputException.at(traceSource, line.line(), "params", e.getMessage());
                }
            }
        }
    }

    /** Whether the rule or one of its tiers holds the limit named {@code name}. */
    private static boolean holds(Rule rule, String name) {
        return rule.limit(name) != null || rule.tiers().stream()
                .anyMatch(t -> t.limits().stream().anyMatch(l -> l.name().equals(name)));
    }

    private Limit knownLimit(TraceLine line) throws InputException {
        return knownLimit(line.limit(), line, "limit");
    }

    private Limit knownLimit(String name, TraceLine line, String field) throws InputException {
        Limit limit = limits.get(name);
        if (limit == null) {
            throw InputException.at(traceSource, line.line(), field, "unknown limit \"" + name + "\" in "
                    + rules.source() + "; it defines " + String.join(", ", limits.keySet()));
        }
        return limit;
    }

    @Override
    public void close() {
        store.close();
    }
}
