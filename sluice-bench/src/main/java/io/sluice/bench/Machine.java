package io.sluice.bench;

import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The machine a run was measured on: figures from different machines are not comparable, ratios from one run
 * are.
 *
 * @param nproc       processors available to the JVM
 * @param memoryBytes total physical memory (from /proc/meminfo), or null elsewhere
 * @param cpuModel    the first "model name" of /proc/cpuinfo, or null
 * @param os          name, version and architecture
 * @param jdk         java.vm.name and java.runtime.version
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
public record Machine(int nproc, Long memoryBytes, String cpuModel, String os, String jdk) {

    /** This machine. */
    public static Machine current() {
        return new Machine(Runtime.getRuntime().availableProcessors(), readMemoryBytes(), readCpuModel(),
                System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
                        + System.getProperty("os.arch"),
                System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
    }

    private static Long readMemoryBytes() {
        for (String line : lines("/proc/meminfo")) {
            if (line.startsWith("MemTotal:")) {
                String[] words = line.trim().split("\\s+");
                return Long.parseLong(words[1]) * 1024;
            }
        }
        return null;
    }

    private static String readCpuModel() {
        for (String line : lines("/proc/cpuinfo")) {
            if (line.startsWith("model name")) {
                return line.substring(line.indexOf(':') + 1).trim();
            }
        }
        return null;
    }

    private static List<String> lines(String file) {
        try {
            return Files.readAllLines(Path.of(file));
        } catch (IOException | RuntimeException e) {
            return List.of();   // not Linux: the field stays null
        }
    }
}
