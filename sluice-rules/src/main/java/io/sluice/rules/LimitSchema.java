package io.sluice.rules;

import io.sluice.AlgorithmName;
import io.sluice.CalendarWindow;
import io.sluice.Concurrency;
import io.sluice.FixedWindow;
import io.sluice.Gcra;
import io.sluice.LeakyBucket;
import io.sluice.Limit;
import io.sluice.RefreshPeriod;
import io.sluice.RollingWindow;
import io.sluice.SlidingLog;
import io.sluice.SlidingWindow;
import io.sluice.SmoothBursty;
import io.sluice.SmoothWarmingUp;
import io.sluice.TokenBucket;
import java.math.BigInteger;
import java.time.DateTimeException;
import java.time.DayOfWeek;
import java.time.Duration;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The parameters each algorithm takes in a rule file, their types, which are required, and how they map onto
 * the limit records of {@code io.sluice}. Defaults are the records' {@code of(...)} defaults, so a rule file
 * and the Java API mean the same thing by an omitted parameter; the records validate every value.
 */
final class LimitSchema {

    /** How a parameter is written. */
    enum Type {
        COUNT("an integer"),
        DURATION(Durations.EXPECTED),
        NUMBER("a number"),
        BOOLEAN("true or false"),
        ZONE("a time zone ID such as Europe/Berlin or UTC"),
        CHOICE(null);

        final String expected;

        Type(String expected) {
            this.expected = expected;
        }
    }

    /** One parameter: its snake_case name, its type, and for a choice the accepted words. */
    record Param(String name, Type type, List<String> choices) {
        String expected() {
            return type == Type.CHOICE ? "one of " + String.join(", ", choices) : type.expected;
        }
    }

    /** Builds the record from parameter values (defaults applied here). */
    @FunctionalInterface
    private interface Builder {
        Limit build(String name, Values v);
    }

    /** Reads a record's parameters back, for changes that give only some of them. */
    @FunctionalInterface
    private interface Reader {
        Map<String, Object> read(Limit limit);
    }

    private static final Map<String, LimitSchema> ALGORITHMS = new LinkedHashMap<>();

    static {
        define(AlgorithmName.FIXED_WINDOW, List.of("limit", "window"),
                List.of(count("limit"), duration("window"), choice("align", FixedWindow.Align.values()),
                        bool("count_rejected")),
                (name, v) -> new FixedWindow(name, v.count("limit"), v.duration("window"),
                        v.has("align") ? v.choice("align", FixedWindow.Align.class) : FixedWindow.Align.EPOCH,
                        v.bool("count_rejected", false)),
                l -> {
                    FixedWindow f = (FixedWindow) l;
                    return params("limit", f.limit(), "window", f.window(), "align", word(f.align()),
                            "count_rejected", f.countRejected());
                });
        define(AlgorithmName.SLIDING_LOG, List.of("limit", "window"),
                List.of(count("limit"), duration("window"), duration("min_gap"), bool("count_rejected")),
                (name, v) -> new SlidingLog(name, v.count("limit"), v.duration("window"),
                        v.duration("min_gap", Duration.ZERO), v.bool("count_rejected", false)),
                l -> {
                    SlidingLog s = (SlidingLog) l;
                    return params("limit", s.limit(), "window", s.window(), "min_gap", s.minGap(),
                            "count_rejected", s.countRejected());
                });
        define(AlgorithmName.SLIDING_WINDOW, List.of("limit", "window"),
                List.of(count("limit"), duration("window")),
                (name, v) -> new SlidingWindow(name, v.count("limit"), v.duration("window")),
                l -> {
                    SlidingWindow s = (SlidingWindow) l;
                    return params("limit", s.limit(), "window", s.window());
                });
        define(AlgorithmName.ROLLING_WINDOW, List.of("limit", "window", "bucket"),
                List.of(count("limit"), duration("window"), duration("bucket")),
                (name, v) -> new RollingWindow(name, v.count("limit"), v.duration("window"), v.duration("bucket")),
                l -> {
                    RollingWindow r = (RollingWindow) l;
                    return params("limit", r.limit(), "window", r.window(), "bucket", r.bucket());
                });
        define(AlgorithmName.TOKEN_BUCKET, List.of("capacity", "refill_tokens", "refill_period"),
                List.of(count("capacity"), count("refill_tokens"), duration("refill_period"),
                        choice("refill", TokenBucket.Refill.values()), count("initial_tokens")),
                (name, v) -> new TokenBucket(name, v.count("capacity"), v.count("refill_tokens"),
                        v.duration("refill_period"),
                        v.has("refill") ? v.choice("refill", TokenBucket.Refill.class) : TokenBucket.Refill.GREEDY,
                        v.has("initial_tokens") ? v.count("initial_tokens") : v.count("capacity")),
                l -> {
                    TokenBucket t = (TokenBucket) l;
                    return params("capacity", t.capacity(), "refill_tokens", t.refillTokens(), "refill_period",
                            t.refillPeriod(), "refill", word(t.refill()), "initial_tokens", t.initialTokens());
                });
        define(AlgorithmName.GCRA, List.of("limit", "period"),
                List.of(count("limit"), duration("period"), count("burst")),
                (name, v) -> new Gcra(name, v.count("limit"), v.duration("period"),
                        v.has("burst") ? v.count("burst") : v.count("limit")),
                l -> {
                    Gcra g = (Gcra) l;
                    return params("limit", g.limit(), "period", g.period(), "burst", g.burst());
                });
        define(AlgorithmName.LEAKY_BUCKET, List.of("limit", "period"),
                List.of(count("limit"), duration("period"), count("burst"), bool("nodelay"), count("delay")),
                (name, v) -> new LeakyBucket(name, v.count("limit"), v.duration("period"), v.count("burst", 0),
                        v.bool("nodelay", false), v.count("delay", 0)),
                l -> {
                    LeakyBucket b = (LeakyBucket) l;
                    return params("limit", b.limit(), "period", b.period(), "burst", b.burst(), "nodelay",
                            b.nodelay(), "delay", b.delay());
                });
        define(AlgorithmName.SMOOTH_BURSTY, List.of("permits_per_second"),
                List.of(number("permits_per_second"), number("max_burst_seconds")),
                (name, v) -> new SmoothBursty(name, v.number("permits_per_second"),
                        v.number("max_burst_seconds", 1.0)),
                l -> {
                    SmoothBursty s = (SmoothBursty) l;
                    return params("permits_per_second", s.permitsPerSecond(), "max_burst_seconds",
                            s.maxBurstSeconds());
                });
        define(AlgorithmName.SMOOTH_WARMING_UP, List.of("permits_per_second", "warmup"),
                List.of(number("permits_per_second"), duration("warmup"), number("cold_factor")),
                (name, v) -> new SmoothWarmingUp(name, v.number("permits_per_second"), v.duration("warmup"),
                        v.number("cold_factor", 3.0)),
                l -> {
                    SmoothWarmingUp s = (SmoothWarmingUp) l;
                    return params("permits_per_second", s.permitsPerSecond(), "warmup", s.warmup(), "cold_factor",
                            s.coldFactor());
                });
        define(AlgorithmName.REFRESH_PERIOD, List.of("limit_for_period", "refresh_period"),
                List.of(count("limit_for_period"), duration("refresh_period"), duration("timeout")),
                (name, v) -> new RefreshPeriod(name, v.count("limit_for_period"), v.duration("refresh_period"),
                        v.duration("timeout", Duration.ofSeconds(5))),
                l -> {
                    RefreshPeriod r = (RefreshPeriod) l;
                    return params("limit_for_period", r.limitForPeriod(), "refresh_period", r.refreshPeriod(),
                            "timeout", r.timeout());
                });
        define(AlgorithmName.CONCURRENCY, List.of("max_concurrent", "lease_ttl"),
                List.of(count("max_concurrent"), duration("lease_ttl")),
                (name, v) -> new Concurrency(name, v.count("max_concurrent"), v.duration("lease_ttl")),
                l -> {
                    Concurrency c = (Concurrency) l;
                    return params("max_concurrent", c.maxConcurrent(), "lease_ttl", c.leaseTtl());
                });
        define(AlgorithmName.CALENDAR_WINDOW, List.of("limit", "period", "zone"),
                List.of(count("limit"), choice("period", CalendarWindow.Period.values()), zone("zone"),
                        choice("week_starts_on", DayOfWeek.values())),
                (name, v) -> new CalendarWindow(name, v.count("limit"), v.choice("period", CalendarWindow.Period.class),
                        v.zone("zone"),
                        v.has("week_starts_on") ? v.choice("week_starts_on", DayOfWeek.class) : DayOfWeek.MONDAY),
                l -> {
                    CalendarWindow c = (CalendarWindow) l;
                    return params("limit", c.limit(), "period", word(c.period()), "zone", c.zone(),
                            "week_starts_on", word(c.weekStartsOn()));
                });
    }

    private final String algorithm;
    private final Set<String> required;
    private final Map<String, Param> params;
    private final Builder builder;
    private final Reader reader;

    private LimitSchema(String algorithm, List<String> required, List<Param> params, Builder builder, Reader reader) {
        this.algorithm = algorithm;
        this.required = Set.copyOf(required);
        Map<String, Param> byName = new LinkedHashMap<>();
        for (Param p : params) {
            byName.put(p.name(), p);
        }
        this.params = Collections.unmodifiableMap(byName);
        this.builder = builder;
        this.reader = reader;
    }

    private static void define(AlgorithmName algorithm, List<String> required, List<Param> params,
                               Builder builder, Reader reader) {
        ALGORITHMS.put(algorithm.text(), new LimitSchema(algorithm.text(), required, params, builder, reader));
    }

    /**
     * Every algorithm name with a schema, in the order of the reference table ({@link AlgorithmName}'s order;
     * {@code RuleFileTest.everyAlgorithmHasAParserEntry} checks that every algorithm has one).
     */
    static List<String> algorithms() {
        return List.copyOf(ALGORITHMS.keySet());
    }

    /** The schema of {@code algorithm}, or null. */
    static LimitSchema of(String algorithm) {
        return ALGORITHMS.get(algorithm);
    }

    String algorithm() {
        return algorithm;
    }

    /** The parameters, in the order of the reference table. */
    List<Param> params() {
        return List.copyOf(params.values());
    }

    /** {@code limit}'s parameters by name, every one given (defaults included): what {@link RuleText} writes. */
    Map<String, Object> read(Limit limit) {
        return reader.read(limit);
    }

    boolean isRequired(String param) {
        return required.contains(param);
    }

    /**
     * A limit named {@code name} from a rule file's definition: {@code algorithm} plus this algorithm's
     * parameters; the required ones must be given, the others default as the record's {@code of(...)} does.
     */
    Limit define(String name, Node definition) throws RuleFileException {
        Map<String, Node> given = definition.members("a map of an algorithm and its parameters");
        Map<String, Object> values = parseParams(given);
        for (Param p : params.values()) {
            if (required.contains(p.name()) && !values.containsKey(p.name())) {
                throw definition.error("missing parameter " + p.name() + " (" + p.expected() + "), required by "
                        + algorithm);
            }
        }
        return build(name, values, definition, given);
    }

    /**
     * {@code current} with the parameters in {@code change} replaced; the others keep their values, except that
     * {@code token_bucket}'s {@code initial_tokens} follows the capacity when it was equal to it, as
     * {@link TokenBucket#withCapacity} does.
     */
    Limit change(Limit current, Node change) throws RuleFileException {
        Map<String, Node> given = change.members("a map of parameters to change");
        Map<String, Object> values = new HashMap<>(reader.read(current));
        Map<String, Object> changed = parseParams(given);
        if (current instanceof TokenBucket t && !changed.containsKey("initial_tokens")
                && t.initialTokens() == t.capacity()) {
            values.remove("initial_tokens");
        }
        values.putAll(changed);
        return build(current.name(), values, change, given);
    }

    private Map<String, Object> parseParams(Map<String, Node> given) throws RuleFileException {
        Map<String, Object> values = new HashMap<>();
        for (Map.Entry<String, Node> e : given.entrySet()) {
            if (e.getKey().equals("algorithm")) {
                continue;
            }
            Param p = params.get(e.getKey());
            if (p == null) {
                throw e.getValue().error("unknown parameter for " + algorithm + "; expected one of "
                        + String.join(", ", params.keySet()));
            }
            values.put(p.name(), parse(p, e.getValue()));
        }
        return values;
    }

    private static Object parse(Param p, Node n) throws RuleFileException {
        switch (p.type()) {
            case COUNT: {
                BigInteger v = n.integer(p.expected());
                if (v.bitLength() > 63) {
                    throw n.error("expected an integer of at most " + Limit.MAX_COUNT + "; was " + v);
                }
                return v.longValue();
            }
            case DURATION:
                try {
                    return Durations.parse(n.string(Durations.EXPECTED));
                } catch (IllegalArgumentException e) {
                    throw n.error(e.getMessage());
                }
            case NUMBER:
                return n.number(p.expected()).doubleValue();
            case BOOLEAN:
                return n.bool(p.expected());
            case ZONE: {
                String id = n.string(p.expected());
                try {
                    return ZoneId.of(id);
                } catch (DateTimeException e) {
                    throw n.error("expected " + p.expected() + "; was \"" + id + "\" (" + e.getMessage() + ")");
                }
            }
            default: {
                String word = n.string(p.expected());
                if (!p.choices().contains(word)) {
                    throw n.error("expected " + p.expected() + "; was \"" + word + "\"");
                }
                return word;
            }
        }
    }

    /** Leading snake_case word of a record's message: the field it names. */
    private static final Pattern FIELD = Pattern.compile("^([a-z_]+)");

    /** Builds the record; its IllegalArgumentException is placed at the parameter it names. */
    private Limit build(String name, Map<String, Object> values, Node at, Map<String, Node> given)
            throws RuleFileException {
        try {
            return builder.build(name, new Values(values));
        } catch (IllegalArgumentException e) {
            String message = e.getMessage();
            Matcher m = FIELD.matcher(message);
            Node where = m.find() && given.containsKey(m.group(1)) ? given.get(m.group(1)) : at;
            throw where.error(message);
        }
    }

    private static Param count(String name) {
        return new Param(name, Type.COUNT, List.of());
    }

    private static Param duration(String name) {
        return new Param(name, Type.DURATION, List.of());
    }

    private static Param number(String name) {
        return new Param(name, Type.NUMBER, List.of());
    }

    private static Param zone(String name) {
        return new Param(name, Type.ZONE, List.of());
    }

    private static Param bool(String name) {
        return new Param(name, Type.BOOLEAN, List.of());
    }

    private static Param choice(String name, Enum<?>[] values) {
        List<String> words = new ArrayList<>();
        for (Enum<?> v : values) {
            words.add(word(v));
        }
        return new Param(name, Type.CHOICE, List.copyOf(words));
    }

    /** An enum constant as rule files spell it: {@code FIRST_REQUEST} is {@code first_request}. */
    private static String word(Enum<?> value) {
        return value.name().toLowerCase(Locale.ROOT);
    }

    private static Map<String, Object> params(Object... pairs) {
        Map<String, Object> m = new HashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            m.put((String) pairs[i], pairs[i + 1]);
        }
        return m;
    }

    /** Typed access to parsed parameter values; a missing one takes the given default. */
    private static final class Values {
        private final Map<String, Object> values;

        Values(Map<String, Object> values) {
            this.values = values;
        }

        boolean has(String name) {
            return values.containsKey(name);
        }

        long count(String name) {
            return (Long) values.get(name);
        }

        long count(String name, long otherwise) {
            return has(name) ? count(name) : otherwise;
        }

        Duration duration(String name) {
            return (Duration) values.get(name);
        }

        Duration duration(String name, Duration otherwise) {
            return has(name) ? duration(name) : otherwise;
        }

        double number(String name) {
            return (Double) values.get(name);
        }

        double number(String name, double otherwise) {
            return has(name) ? number(name) : otherwise;
        }

        boolean bool(String name, boolean otherwise) {
            return has(name) ? (Boolean) values.get(name) : otherwise;
        }

        ZoneId zone(String name) {
            return (ZoneId) values.get(name);
        }

        <E extends Enum<E>> E choice(String name, Class<E> type) {
            return Enum.valueOf(type, ((String) values.get(name)).toUpperCase(Locale.ROOT));
        }
    }
}
