package io.sluice.server;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.sluice.Limit;
import io.sluice.rules.EnvoyConfig;
import java.io.IOException;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The body of {@code POST /v1/check} (one check) and {@code POST /v1/check/batch} (<code>{"checks": [...]}</code>),
 * parsed strictly and validated against the rules in force before anything is decided, so that a request
 * that is refused charges nothing. Every problem names its field: {@code permits: expected an integer in [1,
 * 1000000000000], was "3"}, {@code checks[2].op: unknown op "take"; expected try, try_at_most, acquire, peek or
 * release}.
 *
 * <pre>
 * {"rule": "api", "key": "user:42", "permits": 1, "op": "try", "domain": "acme"}
 * {"rule": "uploads", "key": "user:42", "op": "release", "lease": 1000000}
 * {"domain": "messaging", "descriptor": [{"key": "to_number", "value": "2061111111"}]}
 * </pre>
 */
final class CheckRequest {

    /** What a check asks. */
    enum Op {
        TRY("try"), TRY_AT_MOST("try_at_most"), ACQUIRE("acquire"), PEEK("peek"), RELEASE("release");

        final String word;

        Op(String word) {
            this.word = word;
        }
    }

    /** A validated check of a Sluice rule (or of one limit, addressed with {@code limit}). */
    record RuleCheck(Op op, RuleSet.Bound bound, String key, long permits, Duration maxWait, long lease)
            implements Check {}

    /** A validated check of an envoy descriptor. */
    record DescriptorCheck(Op op, String domain, EnvoyDecider.Descriptor descriptor) implements Check {}

    /** One validated check. */
    sealed interface Check permits RuleCheck, DescriptorCheck {
        Op op();
    }

    /** The separator between a domain and a key in the store; keys and domains may not contain it. */
    static final char DOMAIN_SEPARATOR = '\u001f';

    private static final Set<String> FIELDS = Set.of("rule", "limit", "descriptor", "domain", "key", "permits",
            "op", "max_wait_ms", "lease");
    private static final Set<String> ENTRY_FIELDS = Set.of("key", "value");
    /** {@code max_wait_ms} at or above this means "as long as it takes" (the limiter's own threshold). */
    private static final long UNBOUNDED_MAX_WAIT_MS = 365L * 1000 * 86_400_000L;

    static final ObjectMapper MAPPER = JsonMapper.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .disable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .build();

    static {
        MAPPER.getFactory().setStreamReadConstraints(StreamReadConstraints.builder()
                .maxNestingDepth(16).maxNumberLength(64).maxStringLength(64 * 1024).build());
    }

    private final Settings settings;
    private final EnvoyDecider envoy;

    CheckRequest(Settings settings, EnvoyDecider envoy) {
        this.settings = settings;
        this.envoy = envoy;
    }

    /** Parses a JSON body. */
    static JsonNode parse(byte[] body) throws InvalidRequestException {
        requireText(body);
        return tree(body);
    }

    /** Refuses an empty body and one that is not UTF-8, before any parsing. */
    static void requireText(byte[] body) throws InvalidRequestException {
        if (body.length == 0) {
            throw InvalidRequestException.at("", "empty body; expected a JSON object");
        }
        Utf8.require(body);
    }

    /** The tree of a body that {@link #requireText} accepted. */
    private static JsonNode tree(byte[] body) throws InvalidRequestException {
        try {
            return MAPPER.readTree(body);
        } catch (JsonProcessingException e) {
            String where = e.getLocation() == null ? "" : " at line " + e.getLocation().getLineNr() + ", column "
                    + e.getLocation().getColumnNr();
            throw InvalidRequestException.at("", "malformed JSON" + where + ": "
                    + e.getOriginalMessage().strip().replaceAll("\\s*\\R\\s*", "; "));
        } catch (IOException e) {
            throw InvalidRequestException.at("", "unreadable body: " + e.getMessage());
        }
    }

    /** The one check of a {@code /v1/check} body. */
    Check single(JsonNode root, RuleSet rules) throws InvalidRequestException {
        return check(root, "", rules);
    }

    /**
     * The one check of a {@code /v1/check} body, read from its bytes: the common shape straight from Jackson's
     * token stream ({@link StreamedCheck}), anything else through the tree, so that both answer alike.
     */
    Check single(byte[] body, RuleSet rules) throws InvalidRequestException {
        requireText(body);
        Check streamed = StreamedCheck.read(this, body, rules);
        return streamed != null ? streamed : single(tree(body), rules);
    }

    /** The checks of a {@code /v1/check/batch} body, all validated before any is decided. */
    List<Check> batch(JsonNode root, RuleSet rules) throws InvalidRequestException {
        if (!root.isObject()) {
            throw InvalidRequestException.at("", "expected a JSON object with \"checks\"; was " + describe(root));
        }
        for (Iterator<String> it = root.fieldNames(); it.hasNext(); ) {
            String name = it.next();
            if (!name.equals("checks") && !name.equals("atomic")) {
                throw InvalidRequestException.at(name, "unknown field; a batch has \"checks\", a list of checks, "
                        + "and \"atomic\"");
            }
        }
        JsonNode checks = root.get("checks");
        if (checks == null || !checks.isArray()) {
            throw InvalidRequestException.at("checks", "expected a list of checks; was " + describe(checks));
        }
        if (checks.isEmpty()) {
            throw InvalidRequestException.at("checks", "expected at least one check");
        }
        if (checks.size() > settings.maxBatch()) {
            throw InvalidRequestException.at("checks", "at most " + settings.maxBatch() + " checks per batch, was "
                    + checks.size());
        }
        List<Check> out = new ArrayList<>(checks.size());
        for (int i = 0; i < checks.size(); i++) {
            out.add(check(checks.get(i), "checks[" + i + "].", rules));
        }
        return out;
    }

    /**
     * Whether a {@code /v1/check/batch} body asks for its checks all or nothing ({@code "atomic": true}); then
     * every check must be a {@code try} of a rule or limit, all for the same permits, since they are decided as
     * one request ({@link io.sluice.Store#decideTogether}). Descriptors are refused: Envoy's stay independent.
     */
    static boolean atomic(JsonNode root, List<Check> checks) throws InvalidRequestException {
        JsonNode atomic = root.get("atomic");
        if (atomic == null || atomic.isNull()) {
            return false;
        }
        if (!atomic.isBoolean()) {
            throw InvalidRequestException.at("atomic", "expected true or false; was " + describe(atomic));
        }
        if (!atomic.booleanValue()) {
            return false;
        }
        long permits = -1;
        for (int i = 0; i < checks.size(); i++) {
            if (!(checks.get(i) instanceof RuleCheck c)) {
                throw InvalidRequestException.at("checks[" + i + "]", "an atomic batch checks rules or limits, not "
                        + "descriptors");
            }
            if (c.op() != Op.TRY) {
                throw InvalidRequestException.at("checks[" + i + "].op", "an atomic batch decides op try only; was "
                        + c.op().word);
            }
            if (permits >= 0 && c.permits() != permits) {
                throw InvalidRequestException.at("checks[" + i + "].permits", "every check of an atomic batch asks "
                        + "the same permits (" + permits + "); was " + c.permits());
            }
            permits = c.permits();
        }
        return true;
    }

    private Check check(JsonNode node, String at, RuleSet rules) throws InvalidRequestException {
        String self = at.isEmpty() ? "" : at.substring(0, at.length() - 1);
        if (node == null || !node.isObject()) {
            throw InvalidRequestException.at(self, "expected a JSON object (a check); was " + describe(node));
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
            String name = it.next().getKey();
            if (!FIELDS.contains(name)) {
                throw InvalidRequestException.at(at + name, "unknown field; a check has rule (or limit, or"
                        + " descriptor), key, permits, op, max_wait_ms, lease and domain");
            }
        }
        Op op = op(node.get("op"), at + "op");
        String domain = node.has("domain") ? domain(node.get("domain"), at + "domain") : null;
        boolean byRule = node.has("rule");
        boolean byLimit = node.has("limit");
        boolean byDescriptor = node.has("descriptor");
        if ((byRule ? 1 : 0) + (byLimit ? 1 : 0) + (byDescriptor ? 1 : 0) != 1) {
            throw InvalidRequestException.at(self, "give exactly one of \"rule\", \"limit\" and \"descriptor\"");
        }
        if (byDescriptor) {
            return descriptorCheck(node, at, op, domain);
        }
        RuleSet.Bound bound = byRule ? rule(node.get("rule"), at + "rule", rules) : limit(node.get("limit"),
                at + "limit", rules);
        String key = key(node.get("key"), at + "key");
        String scoped = domain == null ? key : domain + DOMAIN_SEPARATOR + key;
        if (op == Op.RELEASE) {
            for (String field : List.of("permits", "max_wait_ms")) {
                if (node.has(field)) {
                    throw InvalidRequestException.at(at + field, "not used by op release");
                }
            }
            JsonNode lease = node.get("lease");
            if (lease == null) {
                throw InvalidRequestException.at(at + "lease", "required by op release: the lease a decision granted");
            }
            return new RuleCheck(op, bound, scoped, 0, null, integer(lease, at + "lease", Long.MIN_VALUE,
                    Long.MAX_VALUE));
        }
        if (node.has("lease")) {
            throw InvalidRequestException.at(at + "lease", "only used by op release");
        }
        long permits = permits(node.get("permits"), at + "permits", op, bound, scoped);
        Duration maxWait = null;
        if (node.has("max_wait_ms")) {
            if (op != Op.ACQUIRE) {
                throw InvalidRequestException.at(at + "max_wait_ms", "only used by op acquire");
            }
            maxWait = maxWait(node.get("max_wait_ms"), at + "max_wait_ms");
        } else if (op == Op.ACQUIRE) {
            maxWait = ChronoUnit.FOREVER.getDuration();
        }
        return new RuleCheck(op, bound, scoped, permits, maxWait, 0);
    }

    private Check descriptorCheck(JsonNode node, String at, Op op, String domain) throws InvalidRequestException {
        if (op != Op.TRY && op != Op.PEEK) {
            throw InvalidRequestException.at(at + "op", "a descriptor check is try or peek, as envoy's are; was "
                    + op.word);
        }
        for (String field : List.of("key", "max_wait_ms", "lease")) {
            if (node.has(field)) {
                throw InvalidRequestException.at(at + field, "not used with \"descriptor\": the entries are the key");
            }
        }
        if (domain == null) {
            throw InvalidRequestException.at(at + "domain", "required with \"descriptor\": the envoy domain");
        }
        List<EnvoyConfig.Entry> entries = entries(node.get("descriptor"), at + "descriptor");
        long permits = node.has("permits") ? integer(node.get("permits"), at + "permits", op == Op.PEEK ? 0 : 1,
                EnvoyDecider.MAX_HITS) : 1;
        // A peek of 0 hits asks what one hit would get; envoy has no zero-hit check.
        EnvoyDecider.Descriptor descriptor = new EnvoyDecider.Descriptor(entries, null, Math.max(1, permits));
        envoy.validate(domain, List.of(descriptor), 1, settings.maxEntries(), at + "descriptor");
        return new DescriptorCheck(op, domain, descriptor);
    }

    /** A descriptor's entries: a list of <code>{"key", "value"}</code> objects ({@code value} default ""). */
    static List<EnvoyConfig.Entry> entries(JsonNode list, String at) throws InvalidRequestException {
        if (!list.isArray()) {
            throw InvalidRequestException.at(at, "expected a list of {\"key\", \"value\"} entries; was "
                    + describe(list));
        }
        List<EnvoyConfig.Entry> entries = new ArrayList<>(list.size());
        for (int i = 0; i < list.size(); i++) {
            String entryAt = at + "[" + i + "]";
            JsonNode entry = list.get(i);
            if (!entry.isObject()) {
                throw InvalidRequestException.at(entryAt, "expected {\"key\": ..., \"value\": ...}; was "
                        + describe(entry));
            }
            for (Iterator<String> it = entry.fieldNames(); it.hasNext(); ) {
                String name = it.next();
                if (!ENTRY_FIELDS.contains(name)) {
                    throw InvalidRequestException.at(entryAt + "." + name, "unknown field; an entry has key and value");
                }
            }
            String key = string(entry.get("key"), entryAt + ".key");
            String value = entry.has("value") ? string(entry.get("value"), entryAt + ".value") : "";
            entries.add(new EnvoyConfig.Entry(key, value));
        }
        return entries;
    }

    private static Op op(JsonNode node, String at) throws InvalidRequestException {
        if (node == null) {
            return Op.TRY;
        }
        return op(string(node, at), at);
    }

    /** The op a word names; {@code word} has passed {@link #wellFormed}. */
    static Op op(String word, String at) throws InvalidRequestException {
        for (Op op : Op.values()) {
            if (op.word.equals(word)) {
                return op;
            }
        }
        throw InvalidRequestException.at(at, "unknown op \"" + word + "\"; expected try, try_at_most, acquire, peek"
                + " or release");
    }

    static RuleSet.Bound rule(JsonNode node, String at, RuleSet rules) throws InvalidRequestException {
        return rule(string(node, at), at, rules);
    }

    /** The rule {@code name} (well-formed text) names in {@code rules}. */
    static RuleSet.Bound rule(String name, String at, RuleSet rules) throws InvalidRequestException {
        RuleSet.Bound bound = rules.rule(name);
        if (bound == null) {
            throw InvalidRequestException.at(at, "unknown rule \"" + name + "\"; " + (rules.rules().isEmpty()
                    ? "no rules are loaded" : "the rules are " + String.join(", ", rules.rules().keySet())));
        }
        return bound;
    }

    static RuleSet.Bound limit(JsonNode node, String at, RuleSet rules) throws InvalidRequestException {
        String name = string(node, at);
        RuleSet.Bound bound = rules.limit(name);
        if (bound == null) {
            throw InvalidRequestException.at(at, rules.ambiguousLimit(name) ? "limit \"" + name + "\" is defined in"
                    + " several rule files; check a rule instead" : "unknown limit \"" + name + "\"");
        }
        return bound;
    }

    String key(JsonNode node, String at) throws InvalidRequestException {
        if (node == null) {
            throw InvalidRequestException.at(at, "required: the key to decide for, e.g. \"user:42\"");
        }
        return key(string(node, at), at);
    }

    /** Checks a key that is well-formed text. */
    String key(String key, String at) throws InvalidRequestException {
        if (key.isEmpty()) {
            throw InvalidRequestException.at(at, "must not be empty");
        }
        if (key.length() > settings.maxKeyLength()) {
            throw InvalidRequestException.at(at, "must be at most " + settings.maxKeyLength() + " characters, was "
                    + key.length());
        }
        noControlCharacters(key, at);
        return key;
    }

    static String domain(JsonNode node, String at) throws InvalidRequestException {
        return domain(string(node, at), at);
    }

    /** Checks a domain that is well-formed text. */
    static String domain(String domain, String at) throws InvalidRequestException {
        if (domain.isEmpty()) {
            throw InvalidRequestException.at(at, "must not be empty (leave it out for the default namespace)");
        }
        if (domain.length() > Settings.MAX_DOMAIN_LENGTH) {
            throw InvalidRequestException.at(at, "must be at most " + Settings.MAX_DOMAIN_LENGTH + " characters, was "
                    + domain.length());
        }
        noControlCharacters(domain, at);
        return domain;
    }

    /** Keys and domains are joined with a control character; refusing them in both keeps tenants apart. */
    private static void noControlCharacters(String text, String at) throws InvalidRequestException {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < 0x20 || c == 0x7f) {
                throw InvalidRequestException.at(at, "must not contain control characters (found U+"
                        + String.format("%04X", (int) c) + " at index " + i + ")");
            }
        }
    }

    /** Permits in range for the rule that decides {@code key}: the rule's own limits, or its tier's. */
    static long permits(JsonNode node, String at, Op op, RuleSet.Bound bound, String key)
            throws InvalidRequestException {
        if (node == null) {
            return 1;
        }
        // The range every op accepts first (a wrong type is told this range), then the rule's own bound.
        return permits(integer(node, at, op == Op.PEEK ? 0 : 1, Limit.MAX_COUNT), at, op, bound, key);
    }

    /** As {@link #permits(JsonNode, String, Op, RuleSet.Bound, String)} for a given integer. */
    static long permits(long given, String at, Op op, RuleSet.Bound bound, String key)
            throws InvalidRequestException {
        if (op == Op.TRY_AT_MOST) {
            return integer(given, at, 1, Limit.MAX_COUNT);
        }
        io.sluice.Rule decides = bound.rule().ruleFor(key);
        long max = Math.min(decides == null ? Limit.MAX_COUNT : decides.maxPermits(), Limit.MAX_COUNT);
        long permits = integer(given, at, op == Op.PEEK ? 0 : 1, Limit.MAX_COUNT);
        if (permits > max) {
            throw InvalidRequestException.at(at, "must be in [" + (op == Op.PEEK ? 0 : 1) + ", " + max + "] for rule '"
                    + bound.rule().name() + "' (no more can ever be granted at once), was " + permits);
        }
        return permits;
    }

    private static Duration maxWait(JsonNode node, String at) throws InvalidRequestException {
        if (node == null || !node.isNumber()) {
            throw InvalidRequestException.at(at, "expected a number of milliseconds; was " + describe(node));
        }
        BigDecimal ms = node.decimalValue();
        if (ms.signum() < 0) {
            throw InvalidRequestException.at(at, "must not be negative, was " + ms.toPlainString());
        }
        BigDecimal micros = ms.movePointRight(3).stripTrailingZeros();
        if (micros.scale() > 0) {
            throw InvalidRequestException.at(at, "at most 3 decimals (whole microseconds), was " + ms.toPlainString());
        }
        if (ms.compareTo(BigDecimal.valueOf(UNBOUNDED_MAX_WAIT_MS)) >= 0) {
            return ChronoUnit.FOREVER.getDuration();
        }
        return Duration.ofNanos(micros.longValueExact() * 1_000);
    }

    static long integer(JsonNode node, String at, long min, long max) throws InvalidRequestException {
        if (node == null || !node.isIntegralNumber() || !node.canConvertToLong()) {
            boolean tooBig = node != null && node.isIntegralNumber();
            throw InvalidRequestException.at(at, "expected an integer in [" + min + ", " + max + "]; was "
                    + (tooBig ? node.bigIntegerValue().toString() : describe(node)));
        }
        return integer(node.longValue(), at, min, max);
    }

    /** {@code value} when in [{@code min}, {@code max}]. */
    static long integer(long value, String at, long min, long max) throws InvalidRequestException {
        if (value < min || value > max) {
            throw InvalidRequestException.at(at, "expected an integer in [" + min + ", " + max + "]; was " + value);
        }
        return value;
    }

    /** Every string of a request goes through here: a JSON escape can spell an unpaired surrogate. */
    static String string(JsonNode node, String at) throws InvalidRequestException {
        if (node == null || !node.isTextual()) {
            throw InvalidRequestException.at(at, "expected a string; was " + describe(node));
        }
        return wellFormed(node.textValue(), at);
    }

    /**
     * Refuses text with an unpaired surrogate ({@code "\\ud800"} in JSON), which no store can keep apart
     * from {@code "?"} ({@link io.sluice.Text}).
     */
    static String wellFormed(String text, String at) throws InvalidRequestException {
        String problem = io.sluice.Text.problem(text);
        if (problem != null) {
            throw InvalidRequestException.at(at, problem);
        }
        return text;
    }

    /** What a value is, for "expected ...; was ..." messages; long values are cut short. */
    static String describe(JsonNode node) {
        if (node == null || node.isMissingNode()) {
            return "missing";
        }
        String kind;
        if (node.isObject()) {
            return "an object";
        } else if (node.isArray()) {
            return "a list";
        } else if (node.isNull()) {
            return "null";
        } else if (node.isTextual()) {
            kind = "the string ";
        } else if (node.isBoolean()) {
            kind = "";
        } else {
            kind = "the number ";
        }
        String text = node.isTextual() ? Json.string(new StringBuilder(), node.textValue()).toString()
                : node.toString();
        return kind + (text.length() > 64 ? text.substring(0, 61) + "..." : text);
    }
}
