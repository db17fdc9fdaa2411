package io.sluice.bench.redis;

import io.sluice.testkit.redis.RespConnection;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * A snapshot of what Redis has spent: CPU seconds (INFO CPU, user + system, main and background threads) and
 * calls per command (INFO COMMANDSTATS, which counts commands run inside Lua scripts too). The difference of
 * two snapshots divided by the decisions made in between is the server's cost of one decision.
 *
 * @param cpuSeconds  used_cpu_user + used_cpu_sys
 * @param calls       command name to calls
 * @param failedCalls calls that failed or were rejected, all commands together
 */
public record RedisStats(double cpuSeconds, Map<String, Long> calls, long failedCalls) {

    /** Commands of the harness itself, left out of the per-decision counts. */
    private static final Set<String> HARNESS_COMMANDS = Set.of("info", "ping", "monitor",
            "client|setinfo", "client|setname", "hello", "select");

    /** Takes a snapshot over {@code admin}. */
    public static RedisStats take(RespConnection admin) {
        String info = (String) admin.call("INFO", "everything");
        double cpu = 0;
        Map<String, Long> calls = new HashMap<>();
        long failed = 0;
        for (String line : info.split("\r\n")) {
            if (line.startsWith("used_cpu_user:") || line.startsWith("used_cpu_sys:")) {
                cpu += Double.parseDouble(line.substring(line.indexOf(':') + 1));
            } else if (line.startsWith("cmdstat_")) {
                String command = line.substring("cmdstat_".length(), line.indexOf(':'));
                String fields = line.substring(line.indexOf(':') + 1);
                for (String field : fields.split(",")) {
                    if (field.startsWith("calls=")) {
                        calls.put(command, Long.parseLong(field.substring("calls=".length())));
                    } else if (field.startsWith("failed_calls=") || field.startsWith("rejected_calls=")) {
                        failed += Long.parseLong(field.substring(field.indexOf('=') + 1));
                    }
                }
            }
        }
        return new RedisStats(cpu, calls, failed);
    }

    /** Redis's version (INFO SERVER redis_version). */
    public static String version(RespConnection admin) {
        String info = (String) admin.call("INFO", "server");
        for (String line : info.split("\r\n")) {
            if (line.startsWith("redis_version:")) {
                return line.substring("redis_version:".length());
            }
        }
        return "unknown";
    }

    /** Microseconds of Redis CPU per decision between {@code before} and this snapshot. */
    public double cpuMicrosPerDecision(RedisStats before, long decisions) {
        return (cpuSeconds - before.cpuSeconds) * 1e6 / decisions;
    }

    /** Commands per decision between {@code before} and this snapshot, by command (the harness's left out). */
    public Map<String, Double> commandsPerDecision(RedisStats before, long decisions) {
        Map<String, Double> perDecision = new TreeMap<>();
        calls.forEach((command, count) -> {
            long delta = count - before.calls.getOrDefault(command, 0L);
            if (delta > 0 && !HARNESS_COMMANDS.contains(command)) {
                perDecision.put(command, (double) delta / decisions);
            }
        });
        return perDecision;
    }
}
