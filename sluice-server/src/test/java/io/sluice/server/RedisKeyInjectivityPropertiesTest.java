package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.lettuce.core.codec.StringCodec;
import io.sluice.FixedWindow;
import io.sluice.Rule;
import io.sluice.Store;
import io.sluice.redis.internal.KeyLayout;
import io.sluice.rules.EnvoyConfig;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/**
 * No two distinct inputs the server accepts share a Redis key, byte for byte: for (domain, rule, limit, key)
 * accepted by the real validation (the JSON body parsed by {@link CheckRequest}, the rule built by
 * {@link Rule#of}), the bytes Lettuce writes for the state key ({@link StringCodec#UTF8}, the store's codec)
 * determine the input. Strings are drawn from the characters that could confuse the layout: its separators
 * (':', '{', '}', '%'), the domain separator U+001F, '?' (what encoders substitute), unpaired surrogates, a
 * surrogate pair and the descriptor escapes. Request-id keys share the namespace: none may be a state key.
 */
class RedisKeyInjectivityPropertiesTest {

    private static final List<String> FRAGMENTS = List.of("a", "b", ":", "{", "}", "%", "%3A", "7B", "?", "\u001f",
            "\ud800", "\udbff", "\udc00", "\ud83d\ude00", "日", "|", "=", "%7C", " ", "\\", "\"");

    /** Names that differ from each other only in what a careless layout or encoder would lose. */
    private static final List<String> NAMES = List.of("a", "a:b", "a%3Ab", "{a}", "a?", "a\ud800", "a\udc00",
            "a\u001fb", "a:", ":a", "%");

    private static final KeyLayout LAYOUT = new KeyLayout("sluice");
    private static final Store STORE = Store.memory().build();
    private static final CheckRequest PARSER = new CheckRequest(new Settings("127.0.0.1", 0, 0, List.of(), "memory",
            null, null, null, null, Duration.ZERO, Settings.DEFAULT_MAX_BODY_BYTES, Settings.DEFAULT_MAX_BATCH,
            Settings.DEFAULT_MAX_KEY_LENGTH, Settings.DEFAULT_MAX_ENTRIES, true, Duration.ZERO, Duration.ZERO,
            StoreFactory.RedisTuning.SERVER_DEFAULT), null);

    /** One input: {@code domain} may be null (no domain). */
    record Input(String domain, String rule, String limit, String key) {}

    @Provide
    Arbitrary<List<Input>> inputs() {
        // Short strings over few fragments, so that near-misses (inputs one character apart) are common.
        Arbitrary<String> text = Arbitraries.of(FRAGMENTS).list().ofMinSize(0).ofMaxSize(3)
                .map(parts -> String.join("", parts));
        Arbitrary<String> name = Arbitraries.frequencyOf(net.jqwik.api.Tuple.of(3, Arbitraries.of(NAMES)),
                net.jqwik.api.Tuple.of(1, text));
        Arbitrary<String> domain = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(1, Arbitraries.just((String) null)), net.jqwik.api.Tuple.of(3, name));
        return Combinators.combine(domain, name, name, text).as(Input::new).list().ofMinSize(50).ofMaxSize(250);
    }

    @Property(tries = 50)
    void distinctAcceptedInputsNeverShareRedisKeyBytes(@ForAll("inputs") List<Input> inputs) throws Exception {
        Map<ByteBuffer, String> owners = new HashMap<>();
        Set<ByteBuffer> requestKeys = new java.util.HashSet<>();
        for (Input in : inputs) {
            String scopedKey = accept(in);
            if (scopedKey == null) {
                continue;
            }
            String state = LAYOUT.stateKey(in.rule(), scopedKey, in.limit());
            claim(owners, bytes(state), "state of " + in);
            // A call's request-id key is shared by design (one per call, ids unique per store and call); it
            // must only never be some input's state key.
            requestKeys.add(bytes(LAYOUT.requestKey(state, "Xf3.1c")));
        }
        requestKeys.retainAll(owners.keySet());
        assertThat(requestKeys).as("request-id keys that are also state keys").isEmpty();
    }

    @Property(tries = 300)
    void distinctAcceptedDescriptorsNeverShareAStoreKey(@ForAll("entryLists") List<List<EnvoyConfig.Entry>> lists)
            throws Exception {
        EnvoyDecider envoy = new EnvoyDecider(STORE, null);
        Map<ByteBuffer, List<EnvoyConfig.Entry>> owners = new HashMap<>();
        for (List<EnvoyConfig.Entry> entries : lists) {
            try {
                envoy.validate("d", List.of(new EnvoyDecider.Descriptor(entries, null, 1)), 1, 16, "descriptors");
            } catch (InvalidRequestException e) {
                continue;
            }
            ByteBuffer key = bytes(LAYOUT.stateKey("rls:d.k", EnvoyDecider.key(entries), "l"));
            List<EnvoyConfig.Entry> before = owners.putIfAbsent(key, entries);
            assertThat(before == null || before.equals(entries)).as("%s and %s share a key", before, entries).isTrue();
        }
    }

    @Provide
    Arbitrary<List<List<EnvoyConfig.Entry>>> entryLists() {
        Arbitrary<String> text = Arbitraries.of(FRAGMENTS).list().ofMinSize(0).ofMaxSize(3)
                .map(parts -> String.join("", parts));
        return Combinators.combine(text, text).as(EnvoyConfig.Entry::new).list().ofMinSize(1).ofMaxSize(3)
                .list().ofMinSize(50).ofMaxSize(200);
    }

    @Test
    void unpairedSurrogatesAreRefusedAndQuestionMarkStaysItsOwnKey() throws Exception {
        for (String key : List.of("s\ud800", "s\udbff", "s\udc00")) {
            assertThat(accept(new Input(null, "api", "l", key))).as(key).isNull();
            assertThat(accept(new Input(key, "api", "l", "k"))).as("domain " + key).isNull();
            assertThat(accept(new Input(null, "api" + key.substring(1), "l", "k"))).isNull();
        }
        String question = accept(new Input(null, "api", "l", "s?"));
        String plain = accept(new Input(null, "api", "l", "s"));
        assertThat(bytes(LAYOUT.stateKey("api", question, "l")))
                .isNotEqualTo(bytes(LAYOUT.stateKey("api", plain, "l")));
    }

    @Test
    void bodiesThatAreNotUtf8AreRefusedBeforeJacksonRepairsThem() {
        // Jackson alone reads C0 AF as '/' and ED A0 80 as U+D800: "s/" would have two spellings.
        for (byte[] bad : List.of(new byte[] {(byte) 0xC0, (byte) 0xAF}, new byte[] {(byte) 0xED, (byte) 0xA0,
                (byte) 0x80}, new byte[] {(byte) 0xFF}, new byte[] {(byte) 0xF4, (byte) 0x90, (byte) 0x80,
                (byte) 0x80}, new byte[] {(byte) 0xE6, (byte) 0x97})) {
            byte[] body = concat("{\"rule\":\"api\",\"key\":\"s".getBytes(StandardCharsets.UTF_8), bad,
                    "\"}".getBytes(StandardCharsets.UTF_8));
            assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> CheckRequest.parse(body)))
                    .as(Arrays.toString(bad)).isInstanceOf(InvalidRequestException.class)
                    .hasMessageContaining("not UTF-8").hasMessageContaining("at byte 22");
        }
    }

    @Property(tries = 2000)
    void utf8CheckAgreesWithARoundTrip(@ForAll("byteStrings") byte[] bytes) {
        // Well-formed UTF-8 is exactly what survives decoding and re-encoding unchanged.
        boolean roundTrips = Arrays.equals(new String(bytes, StandardCharsets.UTF_8).getBytes(StandardCharsets.UTF_8),
                bytes);
        assertThat(Utf8.malformedAt(bytes) < 0).as(Arrays.toString(bytes)).isEqualTo(roundTrips);
    }

    @Provide
    Arbitrary<byte[]> byteStrings() {
        Arbitrary<Byte> interesting = Arbitraries.of((byte) 'a', (byte) 0x7F, (byte) 0x80, (byte) 0xBF, (byte) 0xC0,
                (byte) 0xC1, (byte) 0xC2, (byte) 0xDF, (byte) 0xE0, (byte) 0xED, (byte) 0xA0, (byte) 0x9F,
                (byte) 0xEF, (byte) 0xF0, (byte) 0xF4, (byte) 0x90, (byte) 0x8F, (byte) 0xF5, (byte) 0xFF);
        return Arbitraries.oneOf(interesting, Arbitraries.bytes()).array(byte[].class).ofMinSize(0).ofMaxSize(8);
    }

    /** The store key the server would decide {@code in} under, or null when the server refuses it. */
    private static String accept(Input in) throws Exception {
        Rule rule;
        try {
            rule = Rule.of(in.rule(), FixedWindow.of(5, Duration.ofMinutes(1)).named(in.limit()));
        } catch (IllegalArgumentException e) {
            return null;
        }
        RuleSet rules = RuleSet.bind(new RuleSet.Sources(List.of("t"), Map.of(rule.name(), rule), Map.of(), Set.of(),
                EnvoyConfig.merge(List.of())), STORE);
        StringBuilder body = new StringBuilder("{\"rule\":");
        Json.string(body, in.rule()).append(",\"key\":");
        Json.string(body, in.key());
        if (in.domain() != null) {
            Json.string(body.append(",\"domain\":"), in.domain());
        }
        body.append('}');
        try {
            JsonNode root = CheckRequest.parse(body.toString().getBytes(StandardCharsets.UTF_8));
            return ((CheckRequest.RuleCheck) PARSER.single(root, rules)).key();
        } catch (InvalidRequestException e) {
            return null;
        }
    }

    private static void claim(Map<ByteBuffer, String> owners, ByteBuffer key, String owner) {
        String before = owners.putIfAbsent(key, owner);
        assertThat(before == null || before.equals(owner)).as("%s and %s share a Redis key", before, owner).isTrue();
    }

    /** The bytes Lettuce sends for a key: the store's connections use {@link StringCodec#UTF8}. */
    private static ByteBuffer bytes(String redisKey) {
        ByteBuffer encoded = StringCodec.UTF8.encodeKey(redisKey);
        byte[] copy = new byte[encoded.remaining()];
        encoded.get(copy);
        return ByteBuffer.wrap(copy);
    }

    private static byte[] concat(byte[]... parts) {
        List<Byte> all = new ArrayList<>();
        for (byte[] p : parts) {
            for (byte b : p) {
                all.add(b);
            }
        }
        byte[] out = new byte[all.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = all.get(i);
        }
        return out;
    }
}
