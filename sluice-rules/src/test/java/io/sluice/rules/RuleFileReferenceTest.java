package io.sluice.rules;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The rule file reference (docs/reference/rule-file.md) names in its table exactly the parameters the parser
 * accepts, for the same algorithms, and marks exactly the required ones "required"; its table of rule fields
 * names exactly the fields a rule takes.
 */
class RuleFileReferenceTest {

    private static final Path PAGE = Path.of("docs", "reference", "rule-file.md");
    private static final Pattern ROW = Pattern.compile("^\\| `([a-z_]+)` \\| ([^|]+) \\| [^|]+ \\| ([^|]+) \\|");
    private static final Pattern NAME = Pattern.compile("`([a-z_]+)`");

    @Test
    void tableMatchesTheParser() throws IOException {
        Set<String> documented = new TreeSet<>();
        Set<String> documentedRequired = new TreeSet<>();
        for (String line : table("| parameter | algorithm |")) {
            Matcher row = ROW.matcher(line);
            if (!row.find() || row.group(1).equals("algorithm")) {
                continue;
            }
            Matcher algorithm = NAME.matcher(row.group(2));
            while (algorithm.find()) {
                String pair = algorithm.group(1) + "." + row.group(1);
                documented.add(pair);
                if (row.group(3).strip().equals("required")) {
                    documentedRequired.add(pair);
                }
            }
        }
        Set<String> accepted = new TreeSet<>();
        Set<String> required = new TreeSet<>();
        for (String algorithm : LimitSchema.algorithms()) {
            LimitSchema schema = LimitSchema.of(algorithm);
            for (LimitSchema.Param p : schema.params()) {
                accepted.add(algorithm + "." + p.name());
                if (schema.isRequired(p.name())) {
                    required.add(algorithm + "." + p.name());
                }
            }
        }
        assertThat(documented).isEqualTo(accepted);
        assertThat(documentedRequired).isEqualTo(required);
    }

    @Test
    void ruleTableNamesEveryRuleField() throws IOException {
        Set<String> documented = new TreeSet<>();
        for (String line : table("| field | value |")) {
            Matcher row = ROW.matcher(line);
            if (row.find()) {
                documented.add(row.group(1));
            }
        }
        assertThat(documented).isEqualTo(new TreeSet<>(RuleFile.RULE_FIELDS));
    }

    /** The lines of the section's table whose header starts with {@code header}. */
    private static java.util.List<String> table(String header) throws IOException {
        java.util.List<String> rows = new java.util.ArrayList<>();
        boolean in = false;
        for (String line : reference().split("\n")) {
            if (line.startsWith(header)) {
                in = true;
            } else if (in && !line.startsWith("|")) {
                break;
            } else if (in) {
                rows.add(line);
            }
        }
        assertThat(rows).as("a table headed " + header).isNotEmpty();
        return rows;
    }

    /** The rule file reference, docs/reference/rule-file.md (tests run in the module's directory). */
    private static String reference() throws IOException {
        Path page = Path.of("").toAbsolutePath().resolveSibling(PAGE);
        assertThat(page).as("the rule file reference").exists();
        return Files.readString(page);
    }
}
