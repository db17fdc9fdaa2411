package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The one table of {@code sluice serve}'s settings in docs/reference/settings.md is complete: a row for every
 * setting of {@link ServeOptions}, with its option, environment variable, config key and default, and no row for
 * a setting that does not exist. {@code sluice serve --help} is generated from the same list.
 */
class ServeSettingsDocTest {

    @Test
    void theSettingsTableHasARowForEverySettingAndNoOther() throws Exception {
        String page = Files.readString(Path.of("..", "docs", "reference", "settings.md"));
        String section = page.substring(page.indexOf("## sluice serve"));
        List<String> rows = section.lines().filter(l -> l.startsWith("| `--")).toList();
        assertThat(rows).hasSize(ServeOptions.ALL.size());
        for (ServeOptions.Setting s : ServeOptions.ALL) {
            String start = "| `" + s.option() + " " + s.label().replace("|", "\\|") + "` | `" + s.env() + "` | "
                    + (s.key() == null ? "" : "`" + s.key() + "`") + " | ";
            String row = rows.stream().filter(r -> r.startsWith(start)).findFirst()
                    .orElseThrow(() -> new AssertionError("no row starting " + start));
            String defaultCell = row.substring(start.length(), row.indexOf(" | ", start.length()));
            String shown = s.defaultText().startsWith("none") ? "none" : s.defaultText();
            assertThat(defaultCell.replace("`", "")).as(s.option()).contains(shown.equals("the bundled examples")
                    ? "examples/server-rules.yaml" : shown);
        }
        assertThat(ServeCommand.usage()).contains(ServeOptions.ALL.stream().map(ServeOptions.Setting::option)
                .toArray(String[]::new));
    }
}
