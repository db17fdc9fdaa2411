package io.sluice.cli;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The options of a command with its own parser ({@code serve}) as picocli options, read from the option table
 * of its {@code --help} text: lines of two to six spaces, the option (and its short form), its value's name
 * after a space or {@code =}, and its description; this reads both a hand-written table and picocli's. The
 * help text stays the one list of such a command's options; the completion script is generated from what this
 * reads there.
 */
final class UsageOptions {

    /**
     * {@code  -h, --help   text}, {@code  --rules FILE   text}, {@code  --compare FILE...   text}, and as picocli
     * writes them, {@code       --rules=FILE   text}.
     */
    private static final Pattern LINE = Pattern.compile(
            "^ {2,6}(?:(-[A-Za-z]), )?(--[a-z][a-z-]*)(?:[ =]([A-Za-z][A-Za-z.]*(?:\\|[A-Za-z.]+)?))?(?: {2,}(.*))?$");

    private UsageOptions() {}

    static List<OptionSpec> of(String helpText) {
        Map<String, OptionSpec> options = new LinkedHashMap<>();
        for (String line : helpText.split("\n")) {
            Matcher m = LINE.matcher(line.stripTrailing());
            if (!m.matches() || options.containsKey(m.group(2))) {
                continue;
            }
            List<String> names = new ArrayList<>();
            if (m.group(1) != null) {
                names.add(m.group(1));
            }
            names.add(m.group(2));
            OptionSpec.Builder option = OptionSpec.builder(names.toArray(new String[0]))
                    .description(m.group(4) == null ? "" : m.group(4));
            String label = m.group(3);
            if (label == null) {
                option.arity("0").type(boolean.class);
            } else {
                // FILE and DIR values complete as paths; others (a port, a URI, a duration) do not.
                boolean path = label.startsWith("FILE") || label.startsWith("DIR");
                option.paramLabel(label).arity(label.endsWith("...") ? "1..*" : "1")
                        .type(path ? Path.class : String.class);
            }
            options.put(m.group(2), option.build());
        }
        return List.copyOf(options.values());
    }
}
