package io.sluice.bench.attack;

import io.sluice.testkit.redis.RedisServer;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * A fault of the redis-server under {@code sluice serve --store redis://…} while a steady load runs: SIGSTOP for
 * 3 s then SIGCONT, SIGKILL and a restart (empty, same port) after 1 s, or {@code CLIENT PAUSE 2000 ALL}. The
 * server's Redis settings are its defaults (timeout 500 ms, breaker after 3 failures, pause 250 ms,
 * docs/server-hardening.md), and the rules' failure policy is the default {@code raise}: 503 while Redis cannot
 * answer.
 *
 * <p>Two loads run from at least {@link #LEAD_MS} before the fault until normal answers have held for {@link #STEADY_MS}
 * after it: two threads on rule {@code bench} (1,000 per second per key, so every normal answer is 200), which
 * tell when answers became normal again; and one thread on rule {@code quota} ({@link #QUOTA} per hour), used up
 * before the fault, which tells whether the fault let anything through. What held, each a violation otherwise:
 * no over-admission (at most {@link #QUOTA} admitted per Redis lifetime: a Redis killed without persistence
 * forgets its counters, so the killed one allows twice); only 200, 429 and 503 answered; answers normal again
 * within {@link #RECOVERY_BOUND_MS} of the fault's end (the defaults need under a second; the bound is generous
 * for a loaded machine).
 */
final class RedisFaultProbe implements Probe {
    static final int QUOTA = 20;
    /**
     * Load before the fault, at least: normal answers are established. Then the fault waits until the quota is
     * used up (its first 429), at most {@link #QUOTA_WAIT_MS} more, so that what the fault lets through shows.
     */
    static final long LEAD_MS = 1_500;
    static final long QUOTA_WAIT_MS = 20_000;
    static final long RECOVERY_BOUND_MS = 5_000;
    static final long STEADY_MS = 1_000;
    private static final Set<Integer> EXPECTED = Set.of(200, 429, 503);

    enum Fault {
        SIGSTOP("redis_sigstop", "SIGSTOP the redis-server for 3 s, then SIGCONT"),
        SIGKILL("redis_sigkill", "SIGKILL the redis-server, restart it empty on the same port after 1 s"),
        CLIENT_PAUSE("redis_client_pause", "CLIENT PAUSE 2000 ALL");

        final String probeName;
        final String description;

        Fault(String probeName, String description) {
            this.probeName = probeName;
            this.description = description;
        }
    }

    private final Fault fault;
    private final RedisServer redis;

    RedisFaultProbe(Fault fault, RedisServer redis) {
        this.fault = fault;
        this.redis = redis;
    }

    @Override
    public String name() {
        return fault.probeName;
    }

    @Override
    public String describe() {
        return String.format("%s, under a load of 2 threads on rule bench (a request every 5 ms each) and 1 on rule "
                + "quota (%d per hour, a request every 10 ms)", fault.description, QUOTA);
    }

    @Override
    public Outcome run(Target target) throws Exception {
        String suffix = fault.name().toLowerCase();
        TimedLoad load = new TimedLoad(target.baseUrl(), "bench", "load-" + suffix, 2, 5);
        TimedLoad quota = new TimedLoad(target.baseUrl(), "quota", "quota-" + suffix, 1, 10);
        long faultStart;
        long faultEnd;
        try {
            Thread.sleep(LEAD_MS);
            long quotaDeadline = System.nanoTime() + QUOTA_WAIT_MS * 1_000_000;
            while (System.nanoTime() < quotaDeadline && quota.answers().stream().noneMatch(a -> a.status() == 429)) {
                Thread.sleep(50);
            }
            faultStart = System.nanoTime();
            faultEnd = inject();
            long deadline = faultEnd + RECOVERY_BOUND_MS * 1_000_000;
            while (System.nanoTime() < deadline && recoveryMs(load.answers(), faultEnd) < 0) {
                Thread.sleep(50);
            }
            Thread.sleep(STEADY_MS);
        } finally {
            load.close();
            quota.close();
            redis.resume(); // whatever happened above, leave Redis running
        }
        return judge(fault, load.answers(), quota.answers(), faultStart, faultEnd);
    }

    /** Applies the fault and returns when it ended ({@link System#nanoTime()}). */
    private long inject() throws InterruptedException {
        switch (fault) {
            case SIGSTOP -> {
                redis.pause();
                Thread.sleep(3_000);
                redis.resume();
                return System.nanoTime();
            }
            case SIGKILL -> {
                redis.kill();
                Thread.sleep(1_000);
                redis.restart(); // returns once the new process answers PING
                return System.nanoTime();
            }
            case CLIENT_PAUSE -> {
                long start = System.nanoTime();
                redis.call("CLIENT", "PAUSE", "2000", "ALL");
                return start + 2_000_000_000L;
            }
            default -> throw new IllegalStateException("unknown fault " + fault);
        }
    }

    /**
     * Counts the answers, computes over-admission and recovery, and lists what did not hold.
     *
     * @param load       the bench rule's answers (every normal answer is 200)
     * @param quota      the quota rule's answers
     * @param faultStart when the fault began
     * @param faultEnd   when it ended (SIGCONT sent, the restarted Redis answered PING, the pause expired)
     */
    static Outcome judge(Fault fault, List<TimedLoad.Answer> load, List<TimedLoad.Answer> quota, long faultStart,
            long faultEnd) {
        Answers answers = new Answers();
        List<String> violations = new ArrayList<>();
        double recoveryMs = recoveryMs(load, faultEnd);
        long recoveredAt = recoveryMs < 0 ? Long.MAX_VALUE : faultEnd + (long) (recoveryMs * 1_000_000);
        Answers unexpected = new Answers();
        for (TimedLoad.Answer a : load) {
            String phase = a.startNanos() < faultStart ? "before" : a.startNanos() < faultEnd ? "during"
                    : a.endNanos() < recoveredAt ? "after, until normal" : "normal again";
            answers.add("bench " + phase + " " + status(a.status()));
        }
        long admitted = 0;
        long admittedBefore = 0;
        for (TimedLoad.Answer a : quota) {
            String phase = a.startNanos() < faultStart ? "before" : a.startNanos() < faultEnd ? "during" : "after";
            answers.add("quota " + phase + " " + status(a.status()));
            if (a.status() == 200) {
                admitted++;
                if (a.endNanos() < faultStart) {
                    admittedBefore++;
                }
            }
        }
        for (TimedLoad.Answer a : load) {
            if (!EXPECTED.contains(a.status())) {
                unexpected.add(status(a.status()));
            }
        }
        for (TimedLoad.Answer a : quota) {
            if (!EXPECTED.contains(a.status())) {
                unexpected.add(status(a.status()));
            }
        }
        long allowed = fault == Fault.SIGKILL ? 2L * QUOTA : QUOTA;
        long overAdmitted = Math.max(0, admitted - allowed);
        if (overAdmitted > 0) {
            violations.add(String.format("quota: %d admitted, %d allowed: %d over-admitted", admitted, allowed,
                    overAdmitted));
        }
        if (unexpected.total() > 0) {
            violations.add("answers other than 200, 429, 503: " + unexpected);
        }
        if (recoveryMs < 0) {
            violations.add(String.format("answers not normal again within %,d ms of the fault's end",
                    RECOVERY_BOUND_MS));
        }
        String finding = String.format("normal again %s after the fault ended (%.1f s fault); quota: %d admitted "
                        + "of %d allowed (%d before the fault), over-admitted %d",
                recoveryMs < 0 ? "never" : String.format("%,.0f ms", recoveryMs), (faultEnd - faultStart) / 1e9,
                admitted, allowed, admittedBefore, overAdmitted);
        return new Outcome(answers, finding, violations, overAdmitted);
    }

    /**
     * Milliseconds from {@code faultEnd} to the end of the first 200 after which every answer to a request
     * started after the fault ended is 200; -1 when there is none (the last answer is not 200, or none came).
     */
    static double recoveryMs(List<TimedLoad.Answer> answers, long faultEnd) {
        List<TimedLoad.Answer> after = answers.stream().filter(a -> a.startNanos() >= faultEnd)
                .sorted((x, y) -> Long.compare(x.endNanos(), y.endNanos())).toList();
        int firstNormal = 0;
        for (int i = 0; i < after.size(); i++) {
            if (after.get(i).status() != 200) {
                firstNormal = i + 1;
            }
        }
        if (firstNormal >= after.size()) {
            return -1;
        }
        return Math.max(0, after.get(firstNormal).endNanos() - faultEnd) / 1e6;
    }

    private static String status(int status) {
        return status == TimedLoad.FAILED ? "failed" : Integer.toString(status);
    }
}
