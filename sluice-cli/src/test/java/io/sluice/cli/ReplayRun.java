package io.sluice.cli;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Runs {@code sluice replay ARGS} through {@link Main#run} and keeps what it printed. */
record ReplayRun(int exitCode, String out, String err) {

    static ReplayRun replay(Object... args) {
        List<String> all = new ArrayList<>();
        all.add("replay");
        for (Object a : args) {
            all.add(a.toString());
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(all.toArray(new String[0]), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new ReplayRun(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    /** A file under src/test/resources/replay. */
    static Path resource(String name) {
        try {
            return Path.of(ReplayRun.class.getResource("/replay/" + name).toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
