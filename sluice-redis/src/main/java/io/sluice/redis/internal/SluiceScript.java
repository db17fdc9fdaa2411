package io.sluice.redis.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one Lua script every decision runs: {@code prelude.lua}, then {@code algorithms/<name>.lua} for each
 * algorithm that has a port (in the fixed order of {@link #ALGORITHMS}), then {@code rule.lua}, concatenated
 * from the resources under {@code io/sluice/redis/lua/}. Built once per JVM, never from request values, so its
 * SHA-1 is stable and {@code EVALSHA} finds it in every Redis script cache. Immutable.
 */
public final class SluiceScript {

    /** Resource folder of the script parts. */
    static final String ROOT = "/io/sluice/redis/lua/";

    /** Every algorithm name Sluice defines ({@code Limit.algorithm()}), in the order their ports are appended. */
    public static final List<String> ALGORITHMS = List.of("fixed_window", "sliding_log", "sliding_window",
            "rolling_window", "token_bucket", "gcra", "leaky_bucket", "smooth_bursty", "smooth_warming_up",
            "refresh_period", "concurrency");

    private static final Pattern SCRIPT_LINE = Pattern.compile("user_script:(\\d+)");

    /** One resource of the script and where it starts, for mapping Redis error lines back to files. */
    record Part(String path, int firstLine, int lines) {}

    private static final class Holder {
        static final SluiceScript INSTANCE = assemble();
    }

    private static final class SyncHolder {
        static final SluiceScript INSTANCE = assemble("sync.lua");
    }

    private final String source;
    private final String sha1;
    private final Set<String> algorithms;
    private final List<Part> parts;

    private SluiceScript(String source, Set<String> algorithms, List<Part> parts) {
        this.source = source;
        this.sha1 = sha1(source);
        this.algorithms = Set.copyOf(algorithms);
        this.parts = List.copyOf(parts);
    }

    /** The script, assembled once from the classpath. */
    public static SluiceScript get() {
        return Holder.INSTANCE;
    }

    /**
     * The second script, for synced mode: the same prelude and algorithms, then {@code sync.lua} instead of
     * {@code rule.lua}. Its own SHA-1; loaded on first use (NOSCRIPT) like the first after a restart.
     */
    public static SluiceScript sync() {
        return SyncHolder.INSTANCE;
    }

    static SluiceScript assemble() {
        return assemble("rule.lua");
    }

    /** Prelude, algorithms, then {@code dispatcher} (the last part, which reads KEYS and ARGV). */
    static SluiceScript assemble(String dispatcher) {
        StringBuilder source = new StringBuilder();
        List<Part> parts = new ArrayList<>();
        Set<String> ported = new LinkedHashSet<>();
        append(source, parts, "prelude.lua", read("prelude.lua"));
        for (String name : ALGORITHMS) {
            String path = "algorithms/" + name + ".lua";
            String text = readIfPresent(path);
            if (text != null) {
                append(source, parts, path, text);
                ported.add(name);
            }
        }
        append(source, parts, dispatcher, read(dispatcher));
        return new SluiceScript(source.toString(), ported, parts);
    }

    private static void append(StringBuilder source, List<Part> parts, String path, String text) {
        String body = text.endsWith("\n") ? text : text + "\n";
        int firstLine = lineCount(source) + 1;
        parts.add(new Part(path, firstLine, lineCount(body)));
        source.append(body);
    }

    private static int lineCount(CharSequence s) {
        int lines = 0;
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) == '\n') {
                lines++;
            }
        }
        return lines;
    }

    /** The full script text. */
    public String source() {
        return source;
    }

    /** Its SHA-1 in lower-case hex, as {@code SCRIPT LOAD} returns it. */
    public String sha1() {
        return sha1;
    }

    /** The algorithms that have a port in the script. */
    public Set<String> algorithms() {
        return algorithms;
    }

    public boolean supports(String algorithm) {
        return algorithms.contains(algorithm);
    }

    /** The parts in script order. */
    List<Part> parts() {
        return parts;
    }

    /** The text of one part, e.g. {@code "prelude.lua"}. */
    String part(String path) {
        for (Part p : parts) {
            if (p.path().equals(path)) {
                String[] lines = source.split("\n", -1);
                return String.join("\n", Arrays.copyOfRange(lines, p.firstLine() - 1, p.firstLine() - 1 + p.lines()))
                        + "\n";
            }
        }
        throw new IllegalArgumentException("the script has no part " + path);
    }

    /**
     * A Redis error message with its script line numbers ({@code user_script:123}) followed by the file and
     * line they come from, e.g. {@code user_script:123 (algorithms/fixed_window.lua:40)}.
     */
    public String explain(String redisError) {
        if (redisError == null) {
            return null;
        }
        Matcher m = SCRIPT_LINE.matcher(redisError);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            int line = Integer.parseInt(m.group(1));
            m.appendReplacement(out, Matcher.quoteReplacement(m.group() + " (" + locate(line) + ")"));
        }
        m.appendTail(out);
        return out.toString();
    }

    /** The file and line of a script line, e.g. {@code rule.lua:12}. */
    String locate(int line) {
        for (Part p : parts) {
            if (line >= p.firstLine() && line < p.firstLine() + p.lines()) {
                return p.path() + ":" + (line - p.firstLine() + 1);
            }
        }
        return "line " + line;
    }

    private static String read(String path) {
        String text = readIfPresent(path);
        if (text == null) {
            throw new IllegalStateException("sluice-redis is missing its script resource " + ROOT + path);
        }
        return text;
    }

    private static String readIfPresent(String path) {
        try (InputStream in = SluiceScript.class.getResourceAsStream(ROOT + path)) {
            return in == null ? null : new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + ROOT + path, e);
        }
    }

    private static String sha1(String text) {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-1");
            return HexFormat.of().formatHex(md.digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JVM has no SHA-1", e);
        }
    }
}
