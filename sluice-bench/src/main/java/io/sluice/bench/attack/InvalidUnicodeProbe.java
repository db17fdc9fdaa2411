package io.sluice.bench.attack;

import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

/**
 * Keys that are not well-formed Unicode (JSON escapes of lone surrogates) and bodies that are not UTF-8 (a raw
 * surrogate, an overlong '/', 0xFF): every one must be refused with 400 and charge nothing. Then the keys an
 * encoder would have turned them into, {@code s} and {@code s?}, against a limit of one: each must be admitted
 * once and refused once, i.e. keep a counter of its own.
 */
final class InvalidUnicodeProbe implements Probe {
    private static final List<String> ESCAPED = List.of("s\\ud800", "s\\udbff", "s\\udc00", "s\\ud800\\ud800");
    private static final List<byte[]> RAW = List.of(new byte[] {(byte) 0xED, (byte) 0xA0, (byte) 0x80},
            new byte[] {(byte) 0xC0, (byte) 0xAF}, new byte[] {(byte) 0xFF});

    private final int rounds;

    InvalidUnicodeProbe(int rounds) {
        this.rounds = rounds;
    }

    @Override
    public String name() {
        return "invalid_unicode";
    }

    @Override
    public String describe() {
        return String.format("%,d rounds of %d lone-surrogate keys and %d non-UTF-8 bodies on rule once "
                + "(fixed_window, 1 per hour); then s and s? twice each", rounds, ESCAPED.size(), RAW.size());
    }

    @Override
    public Outcome run(Target target) throws Exception {
        Answers answers = new Answers();
        Answers lookalikes = new Answers();
        String url = target.baseUrl() + "/v1/check";
        for (int round = 0; round < rounds; round++) {
            for (String key : ESCAPED) {
                answers.add(Integer.toString(post(target, url, utf8("{\"rule\":\"once\",\"key\":\"" + key + "\"}"))));
            }
            for (byte[] raw : RAW) {
                ByteArrayOutputStream body = new ByteArrayOutputStream();
                body.writeBytes(utf8("{\"rule\":\"once\",\"key\":\"s"));
                body.writeBytes(raw);
                body.writeBytes(utf8("\"}"));
                answers.add(Integer.toString(post(target, url, body.toByteArray())));
            }
        }
        boolean separate = true;
        for (String key : List.of("s", "s?")) {
            int first = post(target, url, utf8("{\"rule\":\"once\",\"key\":\"" + key + "\"}"));
            int second = post(target, url, utf8("{\"rule\":\"once\",\"key\":\"" + key + "\"}"));
            lookalikes.add(key + " " + first + "/" + second);
            separate &= first == 200 && second == 429;
        }
        long refused = answers.count("400");
        return new Outcome(answers, String.format("%s of %,d ill-formed requests refused with 400; s and s? %s (%s)",
                refused == answers.total() ? "all" : "only " + refused, answers.total(),
                separate ? "keep separate counters" : "SHARE A COUNTER or were not charged", lookalikes));
    }

    private static int post(Target target, String url, byte[] body) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofByteArray(body)).build();
        return target.http().send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
