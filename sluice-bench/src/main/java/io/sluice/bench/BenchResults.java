package io.sluice.bench;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;

/**
 * The content of {@code bench-results.json}: one run, the machine, the versions and every measurement.
 *
 * @param schema       the version of this layout (sluice-bench/README.md), 1
 * @param profile      "full" or "quick"
 * @param suites       the suites run, in order
 * @param startedAt    ISO-8601 instant the run started
 * @param durationS    wall time of the run in seconds
 * @param machine      where it ran
 * @param versions     library and program versions (sluice, guava, bucket4j, resilience4j, redisson, lettuce,
 *                     netty, jmh; redis and redis-benchmark when the Redis suites ran)
 * @param measurements the rows
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
public record BenchResults(int schema, String profile, List<String> suites, String startedAt, double durationS,
                           Machine machine, Map<String, String> versions, List<Measurement> measurements) {

    /** The layout version written. */
    public static final int SCHEMA = 1;

    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(SerializationFeature.INDENT_OUTPUT)
            // Every field is present in every row, null where it does not apply: readers need not guess.
            .setSerializationInclusion(JsonInclude.Include.ALWAYS);

    /** Writes the results to {@code file} whole: a reader never sees half a file. */
    public void write(Path file) throws IOException {
        Path absolute = file.toAbsolutePath();
        Path dir = absolute.getParent();
        Files.createDirectories(dir);
        Path temp = Files.createTempFile(dir, absolute.getFileName().toString(), ".tmp");
        try {
            JSON.writeValue(temp.toFile(), this);
            // A temporary file is private to its owner; the results are not.
            if (Files.getFileStore(temp).supportsFileAttributeView(PosixFileAttributeView.class)) {
                Files.setPosixFilePermissions(temp, PosixFilePermissions.fromString("rw-r--r--"));
            }
            Files.move(temp, absolute, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(temp);
        }
    }

    /** Reads results written by {@link #write}. */
    public static BenchResults read(Path file) throws IOException {
        return JSON.readValue(file.toFile(), BenchResults.class);
    }
}
