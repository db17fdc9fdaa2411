package io.sluice;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The algorithms Sluice defines, one constant per {@link Limit} record, in the order of the rule-file reference:
 * the one list that the records' {@link Limit#algorithm()}, the in-memory store's dispatch, the rule-file
 * parser and the Redis script loader all read. Adding an algorithm means adding a constant here (with its
 * record in {@code Limit}'s {@code permits}); the {@code switch} expressions over this enum then stop compiling
 * until the new algorithm has a transition, and the rule-file and Redis tests fail until it has a parser
 * entry and a Lua port.
 */
public enum AlgorithmName {
    FIXED_WINDOW(FixedWindow.class),
    SLIDING_LOG(SlidingLog.class),
    SLIDING_WINDOW(SlidingWindow.class),
    ROLLING_WINDOW(RollingWindow.class),
    TOKEN_BUCKET(TokenBucket.class),
    GCRA(Gcra.class),
    LEAKY_BUCKET(LeakyBucket.class),
    SMOOTH_BURSTY(SmoothBursty.class),
    SMOOTH_WARMING_UP(SmoothWarmingUp.class),
    REFRESH_PERIOD(RefreshPeriod.class),
    CONCURRENCY(Concurrency.class),
    CALENDAR_WINDOW(CalendarWindow.class);

    private static final List<String> NAMES = Arrays.stream(values()).map(AlgorithmName::text).toList();

    private final String text;
    private final Class<? extends Limit> limitType;

    AlgorithmName(Class<? extends Limit> limitType) {
        // The rule-file spelling is the constant's name in lower case, so the two cannot drift apart.
        this.text = name().toLowerCase(Locale.ROOT);
        this.limitType = limitType;
    }

    /** The name as rule files, decisions and the Lua scripts spell it, e.g. {@code "token_bucket"}. */
    public String text() {
        return text;
    }

    /** The record that configures this algorithm, e.g. {@code TokenBucket.class}. */
    public Class<? extends Limit> limitType() {
        return limitType;
    }

    /** Every algorithm's {@link #text()}, in declaration order. */
    public static List<String> names() {
        return NAMES;
    }

    /** The algorithm spelled {@code text} (exactly, as in a rule file), if there is one. */
    public static Optional<AlgorithmName> parse(String text) {
        for (AlgorithmName a : values()) {
            if (a.text.equals(text)) {
                return Optional.of(a);
            }
        }
        return Optional.empty();
    }

    /** The algorithm {@code limit} configures. */
    public static AlgorithmName of(Limit limit) {
        for (AlgorithmName a : values()) {
            if (a.limitType == limit.getClass()) {
                return a;
            }
        }
        // Unreachable while every permitted record has its constant, which AlgorithmNameTest checks.
        throw new IllegalStateException(limit.getClass().getName() + " has no AlgorithmName constant");
    }

    @Override
    public String toString() {
        return text;
    }
}
