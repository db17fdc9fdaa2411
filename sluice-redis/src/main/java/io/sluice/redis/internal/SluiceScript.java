package io.sluice.redis.internal;

import io.sluice.AlgorithmName;
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
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one Lua script every decision runs, concatenated from the resources under {@code io/sluice/redis/lua/}:
 * the libraries {@code lib/*.lua} ({@link #LIBRARIES} at the top level, then {@link #ON_FIRST_USE} inside a
 * generated {@code __index} function that builds each group the first time a call reads one of its names), then a
 * loader that {@link #assemble} generates around the algorithm files, then
 * {@code rule_one.lua} (the dispatcher's fast path), {@code lockout.lua} (a rule's lockout) and {@code rule.lua}. Built once per JVM, never from request values, so its SHA-1 is stable and {@code EVALSHA}
 * finds it in every Redis script cache. Immutable.
 *
 * <p><b>Only what a call uses is built.</b> Redis runs the whole chunk on every call, and in Lua 5.1 every
 * {@code function} statement allocates a closure when it runs: with the eleven algorithm files at top level,
 * each decision built every module's closures and tables (about half of the Redis CPU of a token-bucket
 * decision) and threw them away. So each algorithm file becomes, unchanged, one branch of a single
 * function, {@code sluice.algorithm(name)}, that runs the file (registering {@code ALG[name]}) the first time
 * {@code rule.lua} asks for that algorithm in a call and returns the module; a call pays for the modules its
 * limits use. The generated lines sit between the files, so every file keeps its lines together and a Redis
 * error line still maps back to a file and line ({@link #explain}).
 */
public final class SluiceScript {

    /** Resource folder of the script parts. */
    static final String ROOT = "/io/sluice/redis/lua/";

    /**
     * Every algorithm name Sluice defines ({@link AlgorithmName}, which {@code Limit.algorithm()} spells), in the
     * order their ports are appended; each must have its {@code algorithms/<name>.lua}.
     */
    public static final List<String> ALGORITHMS = AlgorithmName.names();

    /**
     * Modules built on another one's code (a port is one file, so shared code lives in the earlier file as a
     * field of {@code sluice}): the loader builds the other module first.
     */
    static final Map<String, String> NEEDS = Map.of("smooth_warming_up", "smooth_bursty");

    /** The libraries run at the top level of every call, in this order ({@code core.lua} creates {@code sluice}). */
    static final List<String> LIBRARIES = List.of("core", "arith", "verdict", "state", "clock", "limit");

    /**
     * The libraries built on first use: each file is one branch of the {@code __index} function of {@code sluice}'s
     * metatable, entered when a call first reads a name the file defines ({@code function sluice.<name>(}), so a
     * call that needs none of them (a token-bucket or GCRA rejection) does not build their closures.
     */
    static final List<String> ON_FIRST_USE = List.of("arith_sat", "arith_mul_div", "doubles", "state_decode",
            "state_write", "state_int");

    /** The first line of the algorithm loader: the libraries end just before it ({@link #library()}). */
    static final String LOADER = "function sluice.algorithm(name)";

    private static final Pattern DEFINED = Pattern.compile("(?m)^function sluice\\.([a-z_0-9]+)\\(");

    private static final Pattern SCRIPT_LINE = Pattern.compile("user_(script|function):(\\d+)");

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
    private final String functionName;
    private final String library;

    private SluiceScript(String source, Set<String> algorithms, List<Part> parts) {
        this.source = source;
        this.sha1 = sha1(source);
        this.algorithms = Set.copyOf(algorithms);
        this.parts = List.copyOf(parts);
        this.functionName = "sluice_" + sha1(library("sluice"));
        this.library = library(functionName);
    }

    /** The script, assembled once from the classpath. */
    public static SluiceScript get() {
        return Holder.INSTANCE;
    }

    /**
     * The second script, for synced mode: the same libraries and algorithms, then {@code sync.lua} instead of
     * {@code rule.lua}. Its own SHA-1; loaded on first use (NOSCRIPT) like the first after a restart.
     */
    public static SluiceScript sync() {
        return SyncHolder.INSTANCE;
    }

    static SluiceScript assemble() {
        return assemble("rule.lua");
    }

    /** Libraries, algorithms, then {@code dispatcher} (the last part, which reads KEYS and ARGV). */
    static SluiceScript assemble(String dispatcher) {
        return assemble(dispatcher, ALGORITHMS);
    }

    /**
     * As {@link #assemble(String)} with the ports of {@code algorithms}; a test passes a name without a port.
     *
     * @throws IllegalStateException naming the resource when an algorithm's {@code .lua} file is missing
     */
    static SluiceScript assemble(String dispatcher, List<String> algorithms) {
        StringBuilder source = new StringBuilder();
        List<Part> parts = new ArrayList<>();
        Set<String> ported = new LinkedHashSet<>();
        for (String lib : LIBRARIES) {
            append(source, parts, "lib/" + lib + ".lua", read("lib/" + lib + ".lua"));
        }
        // The groups built on first use: the first read of a name a file defines runs the whole file.
        generated(source, "setmetatable(sluice, { __index = function(helpers, name)");
        String group = "if";
        for (String lib : ON_FIRST_USE) {
            String path = "lib/" + lib + ".lua";
            String text = read(path);
            List<String> names = new ArrayList<>();
            Matcher defined = DEFINED.matcher(text);
            while (defined.find()) {
                names.add("name == \"" + defined.group(1) + "\"");
            }
            if (names.isEmpty()) {
                throw new IllegalStateException(ROOT + path + " defines no function sluice.<name>(...)");
            }
            generated(source, group + " " + String.join(" or ", names) + " then");
            append(source, parts, path, text);
            group = "elseif";
        }
        generated(source, "else return nil end");
        generated(source, "return rawget(helpers, name)");
        generated(source, "end })");
        // sluice.algorithm(name): the module, built by running its file the first time a call asks for it.
        generated(source, LOADER);
        generated(source, "local loaded = ALG[name]");
        generated(source, "if loaded ~= nil then return loaded end");
        String branch = "if";
        for (String name : algorithms) {
            // Every algorithm has its port: a missing file is a packaging error, reported when the script is
            // first built rather than as an unsupported algorithm when a rule names it.
            String path = "algorithms/" + name + ".lua";
            String text = read(path);
            String needs = NEEDS.containsKey(name) ? " sluice.algorithm(\"" + NEEDS.get(name) + "\")" : "";
            generated(source, branch + " name == \"" + name + "\" then" + needs);
            append(source, parts, path, text);
            ported.add(name);
            branch = "elseif";
        }
        generated(source, "end");
        generated(source, "return ALG[name]");
        generated(source, "end");
        // Tickets of estimated charges, for rule.lua's "charge" and "settle" (settle.lua), and a rule's lockout,
        // for rule.lua (sync.lua uses neither: synced mode refuses settling and lockouts).
        for (String part : TOP_LEVEL_PARTS) {
            append(source, parts, part, read(part));
        }
        append(source, parts, dispatcher, read(dispatcher));
        return new SluiceScript(source.toString(), ported, parts);
    }

    /** A line of the loader {@link #assemble} writes between the files; it belongs to no part. */
    private static void generated(StringBuilder source, String line) {
        source.append(line).append('\n');
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

    /**
     * The same script as a Redis 7 functions library ({@code FUNCTION LOAD}, then {@code FCALL} with the same keys
     * and arguments as {@code EVALSHA}): what the store runs unless it falls back to the script
     * ({@link io.sluice.redis.Scripting}). The libraries and the loader run inside {@code build()} on the first call,
     * since Redis 7.0 forbids {@code math} and {@code setmetatable} while a library loads; the top-level locals the
     * dispatcher uses ({@link #keptLocals}) then stay in the library's locals, so later calls build no helper and no
     * module again (which is why no module may keep a call's data in its upvalues; the wrapper sets
     * {@code sluice.keeps} so the helpers may keep what is a pure function of a call's arguments: parsed parameters,
     * decoded states). The
     * dispatcher is the function's body, unchanged. A second function, {@link #pingFunction()}, only answers 1: the
     * store calls it once when it connects, to learn whether its user may {@code FCALL}. Redis reports an error line
     * of the library as {@code user_function:N}; {@link #explain} maps it back to a file.
     */
    public String functionLibrary() {
        return library;
    }

    /** Lines of {@link #functionLibrary()} before the first line of {@link #source()} ({@code #!lua}, {@code build()}). */
    private static final int LIBRARY_HEAD = 2;
    /** Generated lines between the end of {@code build()}'s body and the dispatcher's first line. */
    private static final int LIBRARY_MIDDLE = 5;

    /**
     * The parts between the libraries and the dispatcher, run at the chunk's top level in this order: the
     * functions library keeps the locals of these that the dispatcher uses ({@link #keptLocals}).
     */
    private static final List<String> TOP_LEVEL_PARTS = List.of("settle.lua", "rule_one.lua", "lockout.lua");

    /** A local at the top level of a part: {@code local name =} or {@code local function name(}. */
    private static final Pattern TOP_LOCAL = Pattern.compile("(?m)^local (?:function )?([A-Za-z_][A-Za-z0-9_]*)");

    private String library(String name) {
        Part dispatcher = parts.get(parts.size() - 1);
        String[] lines = source.split("\n", -1);
        String before = String.join("\n", Arrays.copyOfRange(lines, 0, dispatcher.firstLine() - 1)) + "\n";
        String body = part(dispatcher.path());
        StringBuilder topLevel = new StringBuilder();
        for (Part p : parts) {
            // Only these run at the chunk's top level; the others sit inside the loader's functions or do-blocks.
            if (TOP_LEVEL_PARTS.contains(p.path())
                    || LIBRARIES.stream().anyMatch(l -> p.path().equals("lib/" + l + ".lua"))) {
                topLevel.append(part(p.path()));
            }
        }
        List<String> keptLocals = keptLocals(topLevel.toString(), body);
        if (!keptLocals.contains("sluice")) {
            // The wrapper marks the helpers as kept (sluice.keeps), which only the dispatcher's sluice can carry.
            throw new IllegalStateException("the dispatcher " + dispatcher.path() + " does not use sluice");
        }
        String kept = String.join(", ", keptLocals);
        return "#!lua name=" + name + "\n"
                + "local function build()\n"
                + before
                + "return " + kept + "\n"
                + "end\n"
                + "local built, " + kept + " = false\n"
                + "redis.register_function(\"" + name + "\", function(KEYS, ARGV)\n"
                + "if not built then " + kept + " = build(); sluice.keeps = true; built = true end\n"
                + body
                + "end)\n"
                + "redis.register_function{function_name = \"" + name + "_ping\", callback = function() return 1 end,"
                + " flags = {\"no-writes\"}}\n";
    }

    /**
     * The top-level locals of {@code topLevel} (the parts that run at the chunk's top level) that the dispatcher
     * uses ({@code sluice}, {@code sluice_tickets} and {@code sluice_lockout} for {@code rule.lua}): {@code build()} returns them and the
     * library keeps them between calls.
     */
    static List<String> keptLocals(String topLevel, String dispatcher) {
        Set<String> names = new LinkedHashSet<>();
        Matcher m = TOP_LOCAL.matcher(topLevel);
        while (m.find()) {
            if (Pattern.compile("\\b" + m.group(1) + "\\b").matcher(dispatcher).find()) {
                names.add(m.group(1));
            }
        }
        return List.copyOf(names);
    }

    /**
     * The library's and its decision function's name: {@code sluice_} and the SHA-1 of the library's text (written
     * with the name {@code sluice}), so the name changes whenever the library does. Libraries persist (RDB, AOF,
     * replicas) and two Sluice versions may share a Redis during a rolling upgrade: each loads and calls its own.
     */
    public String functionName() {
        return functionName;
    }

    /** The library's second function, which answers 1 and touches nothing: the store's permission probe. */
    public String pingFunction() {
        return functionName + "_ping";
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

    /**
     * The libraries with their generated loader: what every script runs before the algorithm files, for tests that
     * run an algorithm file or a helper on its own.
     */
    String library() {
        return source.substring(0, source.indexOf(LOADER + "\n"));
    }

    /** The text of one part, e.g. {@code "lib/core.lua"}. */
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
     * A Redis error message with its script line numbers ({@code user_script:123}, or {@code user_function:125}
     * from {@link #functionLibrary()}) followed by the file and line they come from, e.g.
     * {@code user_script:123 (algorithms/fixed_window.lua:40)}.
     */
    public String explain(String redisError) {
        if (redisError == null) {
            return null;
        }
        Matcher m = SCRIPT_LINE.matcher(redisError);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            int line = Integer.parseInt(m.group(2));
            String where = m.group(1).equals("script") ? locate(line) : locateInLibrary(line);
            m.appendReplacement(out, Matcher.quoteReplacement(m.group() + " (" + where + ")"));
        }
        m.appendTail(out);
        return out.toString();
    }

    /** The file and line of a line of {@link #functionLibrary()}. */
    String locateInLibrary(int line) {
        int dispatcher = parts.get(parts.size() - 1).firstLine();
        int scriptLine = line - LIBRARY_HEAD;
        if (scriptLine >= 1 && scriptLine < dispatcher) {
            return locate(scriptLine);
        }
        scriptLine = line - LIBRARY_HEAD - LIBRARY_MIDDLE;
        if (scriptLine >= dispatcher && scriptLine <= lineCount(source)) {
            return locate(scriptLine);
        }
        return "the library wrapper SluiceScript generates";
    }

    /** The file and line of a script line, e.g. {@code rule.lua:12}. */
    String locate(int line) {
        for (Part p : parts) {
            if (line >= p.firstLine() && line < p.firstLine() + p.lines()) {
                return p.path() + ":" + (line - p.firstLine() + 1);
            }
        }
        return line <= lineCount(source) ? "the loader SluiceScript generates" : "line " + line;
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
