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
 * A command's options as picocli options, read from the option table of its {@code --help} text: lines of two
 * spaces, the option (and its short form), its value's name, and its description. The help text stays the one
 * list of a command's options; the completion script is generated from what this reads there.
 */
final class UsageOptions {

    /** {@code  -h, --help   text}, {@code  --rules FILE   text}, {@code  --compare FILE...   text}. */
    private static final Pattern LINE = Pattern.compile(
            "^ {2}(?:(-[A-Za-z]), )?(--[a-z][a-z-]*)(?: ([A-Za-z][A-Za-z.]*(?:\\|[A-Za-z.]+)?))?(?: {2,}(.*))?$");

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
