package io.sluice.cli;

import io.sluice.rules.Millis;
import io.sluice.Concurrency;
import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.Gcra;
import io.sluice.LeakyBucket;
import io.sluice.Limit;
import io.sluice.RefreshPeriod;
import io.sluice.RollingWindow;
import io.sluice.Rule;
import io.sluice.SlidingLog;
import io.sluice.SlidingWindow;
import io.sluice.TokenBucket;
import io.sluice.rules.Durations;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code --summary}: per rule and key class, the requests admitted and rejected, the permits granted, the most
 * permits admitted within any window (for one key, and for the whole class), and the longest wait.
 *
 * <p>The window is the rule's longest window or period when the rule is first used (a rate in permits per
 * second counts as one second). Requests are counted at their decision time. Only {@code try},
 * {@code try_at_most} and {@code acquire} lines are counted; peeks, releases and control lines are not.
 * Per-key state is dropped once a key's window is empty, so memory follows the live keys, not the trace.
 */
final class Summary {

    private final KeyClasses keyClasses;
    /** Per rule name: its keys' state. */
    private final Map<String, RuleKeys> rules = new HashMap<>();
    /** Every group, in order of first appearance. */
    private final List<Group> groups = new ArrayList<>();
    private long lines;

    Summary(KeyClasses keyClasses) {
        this.keyClasses = keyClasses;
    }

    /** Counts one line (every line counts towards the line total; only charging ones towards a group). */
    void record(TraceLine line, Simulation.Outcome outcome) {
        lines++;
        if (!line.op().charges()) {
            return;
        }
        if (line.op() == TraceOp.TRY_ALL) {
            // Each key of an all-or-nothing line was decided (and charged) as its rule's request.
            for (int i = 0; i < line.targets().size(); i++) {
                record(outcome.targetRules().get(i), line.targets().get(i).key(), line.timeMicros(),
                        outcome.decision());
            }
        } else {
            record(outcome.rule(), line.key(), line.timeMicros(), outcome.decision());
        }
    }

    private void record(Rule rule, String key, long timeMicros, Decision decision) {
        RuleKeys keys = rules.get(rule.name());
        if (keys == null) {
            keys = new RuleKeys(rule.name(), longestWindow(rule));
            rules.put(rule.name(), keys);
        }
        keys.record(key, timeMicros, decision);
    }

    void print(PrintStream out, String title) {
        out.println(title);
        out.println(lines + " trace lines");
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"rule", "key class", "requests", "admitted", "rejected", "permits", "window",
                "peak/key", "peak/class", "longest wait"});
        for (Group g : groups) {
            rows.add(new String[] {g.rule, g.keyClass, String.valueOf(g.admitted + g.rejected),
                    String.valueOf(g.admitted), String.valueOf(g.rejected), String.valueOf(g.granted),
                    Durations.format(Duration.ofNanos(g.window * 1_000)), String.valueOf(g.peakPerKey),
                    String.valueOf(g.classWindow.peak()), Millis.format(g.longestWait) + " ms"});
        }
        int[] widths = new int[rows.get(0).length];
        for (String[] row : rows) {
            for (int i = 0; i < row.length; i++) {
                widths[i] = Math.max(widths[i], row[i].length());
            }
        }
        for (String[] row : rows) {
            StringBuilder s = new StringBuilder();
            for (int i = 0; i < row.length; i++) {
                // Names left-aligned, numbers right-aligned.
                String cell = i < 2 ? pad(row[i], widths[i], false) : pad(row[i], widths[i], true);
                s.append(i == 0 ? "" : "  ").append(cell);
            }
            out.println(s.toString().stripTrailing());
        }
    }

    private static String pad(String s, int width, boolean right) {
        String fill = " ".repeat(width - s.length());
        return right ? fill + s : s + fill;
    }

    /** The window the peaks are measured over: the rule's longest window, period or TTL. */
    static long longestWindow(Rule rule) {
        long longest = 0;
        for (Limit l : rule.limits()) {
            longest = Math.max(longest, window(l).toNanos() / 1_000);
        }
        return longest;
    }

    private static Duration window(Limit l) {
        if (l instanceof FixedWindow f) {
            return f.window();
        } else if (l instanceof SlidingLog s) {
            return s.window();
        } else if (l instanceof SlidingWindow s) {
            return s.window();
        } else if (l instanceof RollingWindow r) {
            return r.window();
        } else if (l instanceof TokenBucket t) {
            return t.refillPeriod();
        } else if (l instanceof Gcra g) {
            return g.period();
        } else if (l instanceof LeakyBucket b) {
            return b.period();
        } else if (l instanceof RefreshPeriod r) {
            return r.refreshPeriod();
        } else if (l instanceof Concurrency c) {
            return c.leaseTtl();
        } else if (l instanceof io.sluice.CalendarWindow c) {
            // the longest window of each period: a fall-back overlap of up to an hour joins the window open at it
            return switch (c.period()) {
                case MINUTE -> Duration.ofMinutes(61);
                case HOUR -> Duration.ofHours(2);
                case DAY -> Duration.ofHours(25);
                case WEEK -> Duration.ofDays(7).plusHours(1);
                case MONTH -> Duration.ofDays(31).plusHours(1);
                case YEAR -> Duration.ofDays(366).plusHours(1);
            };
        }
        return Duration.ofSeconds(1); // smooth_bursty, smooth_warming_up: permits per second
    }

    /**
     * One rule's keys: each key's window and group, found by the key itself so the key class is worked out once
     * per key, not once per line. Keys whose window is empty are dropped (amortised by doubling), so this holds
     * the live keys only.
     */
    private final class RuleKeys {
        final String rule;
        final long window;
        final Map<String, Group> groupsByClass = new HashMap<>();
        final Map<String, KeyWindow> keys = new HashMap<>();
        int sweepAt = 1024;

        RuleKeys(String rule, long window) {
            this.rule = rule;
            this.window = window;
        }

        void record(String key, long time, Decision d) {
            KeyWindow k = keys.get(key);
            if (k == null) {
                if (keys.size() >= sweepAt) {
                    sweep(time);
                }
                String keyClass = keyClasses.classOf(key);
                Group g = groupsByClass.get(keyClass);
                if (g == null) {
                    g = new Group(rule, keyClass, window);
                    groupsByClass.put(keyClass, g);
                    groups.add(g);
                }
                k = new KeyWindow(g, new SlidingSum(window));
                keys.put(key, k);
            }
            k.group.record(k.window, time, d);
        }

        private void sweep(long time) {
            keys.values().removeIf(k -> k.window.isIdleAt(time));
            sweepAt = Math.max(1024, keys.size() * 2);
        }
    }

    /** A key's admitted permits in the window, and its group. */
    private record KeyWindow(Group group, SlidingSum window) {}

    /** One rule and key class. */
    private static final class Group {
        final String rule;
        final String keyClass;
        final long window;
        final SlidingSum classWindow;
        long admitted;
        long rejected;
        long granted;
        long peakPerKey;
        long longestWait;

        Group(String rule, String keyClass, long window) {
            this.rule = rule;
            this.keyClass = keyClass;
            this.window = window;
            this.classWindow = new SlidingSum(window);
        }

        void record(SlidingSum keyWindow, long time, Decision d) {
            if (!d.allowed()) {
                rejected++;
                return;
            }
            admitted++;
            granted += d.granted();
            longestWait = Math.max(longestWait, d.waitMicros());
            classWindow.add(time, d.granted());
            keyWindow.add(time, d.granted());
            peakPerKey = Math.max(peakPerKey, keyWindow.peak());
        }
    }
}
