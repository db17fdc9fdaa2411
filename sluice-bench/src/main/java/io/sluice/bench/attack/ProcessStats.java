package io.sluice.bench.attack;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * What a probe could exhaust in the server process, read from {@code /proc/PID}: resident memory, threads and
 * open file descriptors (each socket is one). NaN or -1 where there is no {@code /proc} (not Linux).
 *
 * @param rssMb   VmRSS, MiB
 * @param threads the Threads line of {@code status}
 * @param fds     entries of {@code fd/}
 */
record ProcessStats(double rssMb, long threads, long fds) {

    static ProcessStats of(long pid) {
        Path proc = Path.of("/proc", Long.toString(pid));
        double rss = Double.NaN;
        long threads = -1;
        long fds = -1;
        try {
            for (String line : Files.readAllLines(proc.resolve("status"))) {
                if (line.startsWith("VmRSS:")) {
                    rss = Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024.0;
                } else if (line.startsWith("Threads:")) {
                    threads = Long.parseLong(line.replaceAll("[^0-9]", ""));
                }
            }
            try (Stream<Path> entries = Files.list(proc.resolve("fd"))) {
                fds = entries.count();
            }
        } catch (IOException | NumberFormatException e) {
            // not Linux, or the process is gone: the figures stay unknown
        }
        return new ProcessStats(rss, threads, fds);
    }
}
