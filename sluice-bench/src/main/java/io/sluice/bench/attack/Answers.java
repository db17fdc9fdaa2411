package io.sluice.bench.attack;

import java.util.Map;
import java.util.TreeMap;

/** A probe's answers counted by outcome ("400", "grpc-status 3", "closed by server"), safe across threads. */
final class Answers {
    private final Map<String, Long> counts = new TreeMap<>();

    synchronized void add(String outcome) {
        counts.merge(outcome, 1L, Long::sum);
    }

    synchronized long count(String outcome) {
        return counts.getOrDefault(outcome, 0L);
    }

    synchronized long total() {
        return counts.values().stream().mapToLong(Long::longValue).sum();
    }

    /** {@code 400 ×6, 200 ×2}, or {@code none}. */
    @Override
    public synchronized String toString() {
        if (counts.isEmpty()) {
            return "none";
        }
        StringBuilder text = new StringBuilder();
        counts.forEach((outcome, n) -> text.append(text.isEmpty() ? "" : ", ").append(outcome).append(" ×")
                .append(String.format("%,d", n)));
        return text.toString();
    }
}
