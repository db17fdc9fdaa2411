package io.sluice.server;

import com.fasterxml.jackson.databind.JsonNode;
import io.sluice.Rule;
import io.sluice.rules.EnvoyConfig;
import java.util.Iterator;
import java.util.List;

/**
 * A key as the operator endpoints ({@link AdminService}) name it, validated as a check's fields are: a Sluice
 * rule (or one limit alone), the key and its domain, <code>{"rule", "key", "domain"}</code>; or an Envoy
 * domain's descriptor, <code>{"domain", "descriptor": [{"key", "value"}, ...]}</code>, which names the
 * {@code rate_limit} it matches and that limit's counter of the descriptor (as envoy counts it, a
 * {@code share_threshold} wildcard's shared counter included).
 *
 * @param rule       the store's rule
 * @param domain     the key's domain (a Sluice key's namespace, or the Envoy domain), or null
 * @param key        the key as given; for a descriptor, the counter's key on the store
 * @param scoped     the key on the store: for a rule, the domain and the key joined, as checks count it
 * @param permits    what a state read asks about (0 to the rule's most, default 1); 0 where not read
 * @param descriptor the descriptor's entries as given, or null for a rule's key
 */
record AdminAddress(Rule rule, String domain, String key, String scoped, long permits,
                    List<EnvoyConfig.Entry> descriptor) {

    private static final List<String> RULE_FIELDS = List.of("rule", "limit", "key", "domain");
    private static final List<String> DESCRIPTOR_FIELDS = List.of("domain", "descriptor");

    /**
     * Parses the body of an operator endpoint, with {@code permits} too when {@code withPermits}.
     *
     * @throws InvalidRequestException naming the field at fault and what was expected
     */
    static AdminAddress parse(JsonNode node, RuleSet rules, boolean withPermits, CheckRequest parser,
                              Settings settings, EnvoyDecider envoy) throws InvalidRequestException {
        if (!node.isObject()) {
            throw InvalidRequestException.at("", "expected a JSON object with rule (or limit), key and domain, or"
                    + " domain and descriptor; was " + CheckRequest.describe(node));
        }
        boolean byDescriptor = node.has("descriptor");
        List<String> fields = byDescriptor ? DESCRIPTOR_FIELDS : RULE_FIELDS;
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            String name = it.next();
            if (!fields.contains(name) && !(withPermits && name.equals("permits"))) {
                throw InvalidRequestException.at(name, byDescriptor && RULE_FIELDS.contains(name)
                        ? "not used with \"descriptor\": the Envoy domain and the descriptor's entries name the key"
                        : "unknown field; expected rule (or limit), key, domain" + (withPermits ? " and permits" : "")
                        + "; or domain and descriptor");
            }
        }
        return byDescriptor ? descriptor(node, rules, withPermits, settings, envoy)
                : rule(node, rules, withPermits, parser);
    }

    private static AdminAddress rule(JsonNode node, RuleSet rules, boolean withPermits, CheckRequest parser)
            throws InvalidRequestException {
        if (node.has("rule") == node.has("limit")) {
            throw InvalidRequestException.at("", "give exactly one of \"rule\" and \"limit\"");
        }
        RuleSet.Bound bound = node.has("rule") ? CheckRequest.rule(node.get("rule"), "rule", rules)
                : CheckRequest.limit(node.get("limit"), "limit", rules);
        String key = parser.key(node.get("key"), "key");
        String domain = node.has("domain") ? CheckRequest.domain(node.get("domain"), "domain") : null;
        String scoped = domain == null ? key : domain + CheckRequest.DOMAIN_SEPARATOR + key;
        long permits = withPermits ? CheckRequest.permits(node.get("permits"), "permits", CheckRequest.Op.PEEK,
                bound, scoped) : 0;
        return new AdminAddress(bound.limiter().rule(), domain, key, scoped, permits, null);
    }

    private static AdminAddress descriptor(JsonNode node, RuleSet rules, boolean withPermits, Settings settings,
                                           EnvoyDecider envoy) throws InvalidRequestException {
        if (!node.has("domain")) {
            throw InvalidRequestException.at("domain", "required with \"descriptor\": the Envoy domain");
        }
        String domain = CheckRequest.string(node.get("domain"), "domain");
        List<EnvoyConfig.Entry> entries = CheckRequest.entries(node.get("descriptor"), "descriptor");
        long permits = withPermits && node.has("permits")
                ? CheckRequest.integer(node.get("permits"), "permits", 0, EnvoyDecider.MAX_HITS) : withPermits ? 1 : 0;
        envoy.validate(domain, List.of(new EnvoyDecider.Descriptor(entries, null, Math.max(1, permits))), 1,
                settings.maxEntries(), "descriptor");
        EnvoyConfig config = rules.envoy();
        if (!config.domains().contains(domain)) {
            throw InvalidRequestException.at("domain", "unknown Envoy domain \"" + domain + "\"; "
                    + (config.domains().isEmpty() ? "no Envoy configuration is loaded"
                    : "the domains are " + String.join(", ", config.domains().stream().sorted().toList())));
        }
        EnvoyConfig.Match match = config.lookup(domain, entries);
        if (match == null) {
            throw InvalidRequestException.at("descriptor", "matches no rate_limit of domain \"" + domain + "\"");
        }
        RuleSet.EnvoyBound bound = rules.envoy(match.rateLimit());
        if (bound == null || bound.rule() == null) {
            throw InvalidRequestException.at("descriptor", "matches " + match.rateLimit().fullKey() + ", which "
                    + (match.rateLimit().unlimited() ? "is unlimited" : "blocks every request (requests_per_unit: 0)")
                    + " and keeps no count");
        }
        String key = EnvoyDecider.key(entries, match.sharedValue());
        return new AdminAddress(bound.rule(), domain, key, key, permits, List.copyOf(entries));
    }
}
