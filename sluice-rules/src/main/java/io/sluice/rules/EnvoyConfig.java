package io.sluice.rules;

import io.sluice.FailurePolicy;
import io.sluice.FixedWindow;
import io.sluice.Limit;
import io.sluice.Rule;
import io.sluice.rules.EnvoyDescriptorTree.Level;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * envoyproxy/ratelimit's YAML configuration, read as that service reads it, so its users can point Sluice at
 * their existing files: a {@code domain}, and a tree of {@code descriptors} of {@code key} and optional
 * {@code value}, each optionally carrying a {@code rate_limit} ({@code unit} and {@code requests_per_unit},
 * or {@code unlimited}), with {@code name}/{@code replaces}, {@code shadow_mode}, {@code quota_mode},
 * {@code detailed_metric}, {@code value_to_metric}, {@code share_threshold} and {@code metadata}; and, a Sluice
 * addition, {@code on_failure} (at the top or on a descriptor, inherited by the descriptors below it).
 *
 * <pre>
 * domain: messaging
 * descriptors:
 *   - key: message_type
 *     value: marketing
 *     descriptors:
 *       - key: to_number
 *         rate_limit: {unit: day, requests_per_unit: 5}
 *   - key: to_number
 *     rate_limit: {unit: day, requests_per_unit: 100}
 * </pre>
 *
 * <p>One file may hold several YAML documents ({@code ---}), one domain each; a domain may appear once.
 * {@link #match} finds the limit for a request descriptor exactly as envoyproxy/ratelimit's
 * {@code GetLimit} does: at each level {@code key_value} first, then the wildcards in file order (each
 * {@code *} anywhere in the value matches any run of characters, possibly empty), then {@code key} alone (the
 * "default" for any value); the limit applies only when the request's last entry lands on it, so a request
 * deeper or shallower than the configuration matches nothing. {@link #lookup} also gives the statistics key
 * envoy would use for the request ({@code detailed_metric}, {@code value_to_metric}, {@code share_threshold})
 * and the entries whose counter is shared by every value its wildcard matches ({@code share_threshold}).
 *
 * <p>Deliberate differences, all on the side of telling the user early: keys are checked where they belong
 * (envoy accepts any of its keys anywhere); {@code requests_per_unit} must be written unless
 * {@code unlimited} (envoy reads a missing one as 0, which rejects every request); wildcards are honoured at
 * every level of the tree. Errors name the file, line, column and field, as {@link RuleFile}'s do.
 * Immutable.
 */
public final class EnvoyConfig {

    /** Time units of envoy's {@code rate_limit.unit}; windows are aligned to the Unix epoch, as envoy's are. */
    public enum Unit {
        SECOND(1), MINUTE(60), HOUR(3_600), DAY(86_400), WEEK(7 * 86_400L),
        /** 30 days, as envoyproxy/ratelimit divides by. */
        MONTH(30 * 86_400L),
        /** 365 days, as envoyproxy/ratelimit divides by. */
        YEAR(365 * 86_400L);

        private final long seconds;

        Unit(long seconds) {
            this.seconds = seconds;
        }

        public long seconds() {
            return seconds;
        }

        public Duration duration() {
            return Duration.ofSeconds(seconds);
        }

        /** The name as the YAML writes it, e.g. {@code minute}. */
        public String word() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * One {@code rate_limit} block and where it sits.
     *
     * @param domain          the domain
     * @param path            the descriptor path below the domain as envoy names it in statistics, e.g.
     *                        {@code message_type_marketing.to_number}: each level's {@code key} or
     *                        {@code key_value}, joined by dots
     * @param name            {@code rate_limit.name}, or empty
     * @param requestsPerUnit {@code requests_per_unit}, in [0, 2^32 − 1]; 0 rejects every request
     * @param unit            the window; null when {@code unlimited}
     * @param unlimited       {@code unlimited: true}: always OK, never counted
     * @param shadowMode      {@code shadow_mode: true}: counted and reported, but the code is always OK
     * @param replaces        names of limits this one replaces when both match one request
     * @param detailedMetric  {@code detailed_metric: true}: statistics per request value
     * @param quotaMode       {@code quota_mode: true}: over the limit fails the request only when every
     *                        quota-mode descriptor of it is over
     * @param metadata        {@code metadata}, as plain maps, lists and scalars; empty when absent
     * @param onFailure       {@code on_failure} in force for this block (its own or inherited), or null for the
     *                        server's default (the store's error answered as UNAVAILABLE)
     */
    public record RateLimit(String domain, String path, String name, long requestsPerUnit, Unit unit,
                            boolean unlimited, boolean shadowMode, List<String> replaces, boolean detailedMetric,
                            boolean quotaMode, Map<String, Object> metadata, FailurePolicy onFailure) {

        /** envoy's full key, {@code domain.path}: the statistics name of the limit. */
        public String fullKey() {
            return domain + "." + path;
        }
    }

    /** One entry of a request descriptor. */
    public record Entry(String key, String value) {}

    /**
     * What a request descriptor falls under.
     *
     * @param rateLimit   the block that applies
     * @param statsKey    envoy's statistics key for this request, {@code domain.path}: the block's full key, or
     *                    with request values where {@code detailed_metric} or {@code value_to_metric} ask for them
     * @param sharedValue per request entry, the wildcard value whose counter that entry shares
     *                    ({@code share_threshold}), or null where the entry's own value keys the counter
     */
    public record Match(RateLimit rateLimit, String statsKey, List<String> sharedValue) {}

    /** A top-level {@code domain:} or {@code descriptors:} line, which a Sluice rule file cannot have. */
    private static final Pattern DOMAIN_LINE = Pattern.compile("(?m)^(domain|descriptors)\\s*:");

    private final String source;
    private final Map<String, Level> domains;
    private final Map<String, List<RateLimit>> rateLimits;

    private EnvoyConfig(String source, Map<String, Level> domains, Map<String, List<RateLimit>> rateLimits) {
        this.source = source;
        this.domains = Collections.unmodifiableMap(domains);
        this.rateLimits = Collections.unmodifiableMap(rateLimits);
    }

    /**
     * Whether {@code text} is an envoyproxy/ratelimit configuration rather than a Sluice rule file: it has a
     * top-level {@code domain:} or {@code descriptors:} line, which a rule file cannot have (so a configuration
     * missing its domain is refused as one, with envoy's message).
     */
    public static boolean looksLikeEnvoyConfig(String text) {
        return DOMAIN_LINE.matcher(text).find();
    }

    /**
     * Reads a configuration file; errors name it as {@code file.toString()}.
     *
     * @throws IOException       when the file cannot be read
     * @throws RuleFileException when its content is not a valid configuration
     */
    public static EnvoyConfig read(Path file) throws IOException, RuleFileException {
        return parse(file.toString(), Files.readString(file));
    }

    /**
     * Parses configuration text: one or more YAML documents, each a domain.
     *
     * @throws RuleFileException naming the line, column and field at fault
     */
    public static EnvoyConfig parse(String source, String text) throws RuleFileException {
        Map<String, Level> domains = new LinkedHashMap<>();
        Map<String, List<RateLimit>> rateLimits = new LinkedHashMap<>();
        EnvoyConfigParser.parse(source, text, domains, rateLimits);
        return new EnvoyConfig(source, domains, rateLimits);
    }

    /**
     * Several configurations as one, as envoyproxy/ratelimit loads a directory of files.
     *
     * @throws RuleFileException when two of them configure the same domain
     */
    public static EnvoyConfig merge(List<EnvoyConfig> configs) throws RuleFileException {
        Map<String, Level> domains = new LinkedHashMap<>();
        Map<String, List<RateLimit>> rateLimits = new LinkedHashMap<>();
        Map<String, String> sources = new LinkedHashMap<>();
        List<String> names = new ArrayList<>();
        for (EnvoyConfig c : configs) {
            names.add(c.source);
            for (Map.Entry<String, Level> d : c.domains.entrySet()) {
                String before = sources.putIfAbsent(d.getKey(), c.source);
                if (before != null) {
                    throw new RuleFileException(c.source, 0, 0, "domain", "duplicate domain '" + d.getKey()
                            + "', already configured in " + before);
                }
                domains.put(d.getKey(), d.getValue());
                rateLimits.put(d.getKey(), c.rateLimits.get(d.getKey()));
            }
        }
        return new EnvoyConfig(String.join(", ", names), domains, rateLimits);
    }

    /**
     * The configuration as Sluice rules, for tools that address rules by name ({@code sluice replay}): each
     * counted {@code rate_limit} block becomes a rule named by its full key ({@code domain.path}, e.g.
     * {@code messaging.message_type_marketing.to_number}) of one limit of the same name, an epoch-aligned
     * {@code fixed_window} counting rejected hits, as envoy's counter and {@code sluice serve} count, with the
     * block's {@code on_failure}. Blocks that count nothing ({@code unlimited}, {@code requests_per_unit: 0})
     * have no rule.
     *
     * @throws RuleFileException when a full key is too long to be a rule name
     */
    public RuleFile asRuleFile() throws RuleFileException {
        Map<String, Limit> limits = new LinkedHashMap<>();
        Map<String, Rule> rules = new LinkedHashMap<>();
        for (List<RateLimit> blocks : rateLimits.values()) {
            for (RateLimit b : blocks) {
                if (b.unlimited() || b.requestsPerUnit() == 0) {
                    continue;
                }
                String name = b.fullKey();
                FixedWindow limit = new FixedWindow(name, b.requestsPerUnit(),
                        b.unit().duration(), FixedWindow.Align.EPOCH, true);
                Rule rule;
                try {
                    rule = Rule.of(name, limit);
                } catch (IllegalArgumentException e) {
                    throw new RuleFileException(source, 0, 0, "descriptors", "limit " + name
                            + " cannot be a rule: " + e.getMessage());
                }
                if (b.onFailure() != null) {
                    rule = rule.withFailurePolicy(b.onFailure());
                }
                limits.put(name, limit);
                rules.put(name, rule);
            }
        }
        return RuleFile.of(source, limits, rules);
    }

    /** The file(s) this configuration was read from. */
    public String source() {
        return source;
    }

    /** The configured domains, in file order. */
    public Set<String> domains() {
        return domains.keySet();
    }

    /** Every {@code rate_limit} block of {@code domain}, in file order (depth first); empty for an unknown domain. */
    public List<RateLimit> rateLimits(String domain) {
        return rateLimits.getOrDefault(domain, List.of());
    }

    /**
     * The limit a request descriptor of {@code domain} falls under, or null when none applies (an unknown
     * domain, no matching descriptor, or a match whose depth differs from the request's).
     */
    public RateLimit match(String domain, List<Entry> entries) {
        Match m = lookup(domain, entries);
        return m == null ? null : m.rateLimit();
    }

    /**
     * The limit a request descriptor of {@code domain} falls under, with the statistics key and shared counters
     * envoyproxy/ratelimit would use for it; null when no limit applies (as for {@link #match}). A descriptor
     * without entries matches nothing.
     */
    public Match lookup(String domain, List<Entry> entries) {
        Level level = domains.get(domain);
        return level == null ? null : EnvoyDescriptorTree.lookup(domain, level, entries);
    }
}
