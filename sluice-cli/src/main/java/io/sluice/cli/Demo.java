package io.sluice.cli;

import io.sluice.Clock;
import io.sluice.Concurrency;
import io.sluice.Decision;
import io.sluice.FixedWindow;
import io.sluice.Gcra;
import io.sluice.LeakyBucket;
import io.sluice.Limit;
import io.sluice.RateLimiter;
import io.sluice.RefreshPeriod;
import io.sluice.RollingWindow;
import io.sluice.Rule;
import io.sluice.SlidingLog;
import io.sluice.SlidingWindow;
import io.sluice.SmoothBursty;
import io.sluice.SmoothWarmingUp;
import io.sluice.Store;
import io.sluice.TokenBucket;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code sluice demo}: every algorithm, configured for about ten requests per second, decides the same burst
 * of requests on the in-memory store. Time is virtual (a clock the demo moves), so the output is exact and
 * the same on every run: a real run of the library, not a recording.
 */
final class Demo {

    /** 12 requests at once, then one every 100 ms: 30 requests over 1.8 s. */
    static final int BURST = 12;
    static final int TRICKLE = 18;
    static final long TRICKLE_GAP_MICROS = 100_000;
    /** 2026-01-01T00:00:00.5Z: half-way through an epoch-aligned second, to show the fixed window's boundary. */
    static final long START_MICROS = 1_767_225_600_500_000L;

    private Demo() {}

    /** Prints the demo; returns the exit status, 0. */
    static int run(PrintStream out) {
        out.println("Sluice demo: 30 requests for key user:42 - " + BURST + " at t=0, then one every 100 ms until 1.8 s");
        out.println("(in-memory store, virtual clock starting at 2026-01-01T00:00:00.5Z, half-way through a second)");
        out.println();
        out.println("tryAcquire: + admitted, . rejected");
        out.printf("%-18s %-34s %-13s %-19s %s%n", "algorithm", "limit", "burst at t=0", "then every 100 ms", "admitted");
        for (Limit limit : limits()) {
            out.println(tryRow(limit));
        }
        out.println();
        out.println("reserve(maxWait = 1 s): wait in ms before each of the " + BURST
                + " burst requests may proceed; x = rejected (wait too long)");
        for (Limit limit : List.of(TokenBucket.of(10, 10, Duration.ofSeconds(1)), Gcra.of(10, Duration.ofSeconds(1)),
                LeakyBucket.of(10, Duration.ofSeconds(1)).withBurst(5),
                LeakyBucket.of(10, Duration.ofSeconds(1)).withBurst(5).withDelay(3).named("leaky_bucket delay=3"),
                SmoothBursty.of(10), SmoothWarmingUp.of(10, Duration.ofSeconds(1)),
                RefreshPeriod.of(10, Duration.ofSeconds(1)))) {
            out.println(reserveRow(limit));
        }
        out.println();
        out.println("Note the fixed window: its window ends 0.5 s after the burst and it admits 10 more at once,");
        out.println("while the sliding log waits until each admitted request is a full second old.");
        return ExitStatus.OK;
    }

    static List<Limit> limits() {
        Duration second = Duration.ofSeconds(1);
        return List.of(
                FixedWindow.of(10, second),
                SlidingLog.of(10, second),
                SlidingWindow.of(10, second),
                RollingWindow.of(10, second, Duration.ofMillis(100)),
                TokenBucket.of(10, 10, second),
                Gcra.of(10, second),
                LeakyBucket.of(10, second).withBurst(5).withNodelay(true),
                SmoothBursty.of(10),
                SmoothWarmingUp.of(10, second),
                RefreshPeriod.of(10, second),
                Concurrency.of(3, Duration.ofMillis(250)));
    }

    private static String tryRow(Limit limit) {
        AtomicLong now = new AtomicLong(START_MICROS);
        StringBuilder burst = new StringBuilder();
        StringBuilder trickle = new StringBuilder();
        int admitted = 0;
        try (RateLimiter limiter = limiter(limit, now::get)) {
            for (int i = 0; i < BURST + TRICKLE; i++) {
                if (i >= BURST) {
                    now.addAndGet(TRICKLE_GAP_MICROS);
                }
                Decision d = limiter.tryAcquire("user:42");
                (i < BURST ? burst : trickle).append(d.allowed() ? '+' : '.');
                admitted += d.allowed() ? 1 : 0;
            }
        }
        return String.format("%-18s %-34s %-13s %-19s %d", limit.name(), describe(limit), burst, trickle, admitted);
    }

    private static String reserveRow(Limit limit) {
        AtomicLong now = new AtomicLong(START_MICROS);
        StringBuilder waits = new StringBuilder();
        try (RateLimiter limiter = limiter(limit, now::get)) {
            for (int i = 0; i < BURST; i++) {
                Decision d = limiter.reserve("user:42", 1, Duration.ofSeconds(1));
                waits.append(String.format("%5s", d.allowed() ? String.valueOf(d.waitMicros() / 1000) : "x"));
            }
        }
        return String.format("%-22s%s", limit.name(), waits);
    }

    private static RateLimiter limiter(Limit limit, Clock clock) {
        Store store = Store.memory().clock(clock).build();
        return RateLimiter.builder(Rule.of("demo", limit)).store(store).build();
    }

    static String describe(Limit limit) {
        if (limit instanceof FixedWindow l) {
            return l.limit() + " per " + human(l.window()) + " window";
        } else if (limit instanceof SlidingLog l) {
            return l.limit() + " in any " + human(l.window());
        } else if (limit instanceof SlidingWindow l) {
            return l.limit() + " per " + human(l.window()) + ", weighted";
        } else if (limit instanceof RollingWindow l) {
            return l.limit() + " per " + human(l.window()) + ", " + human(l.bucket()) + " buckets";
        } else if (limit instanceof TokenBucket l) {
            return "capacity " + l.capacity() + ", +" + l.refillTokens() + "/" + human(l.refillPeriod());
        } else if (limit instanceof Gcra l) {
            return l.limit() + "/" + human(l.period()) + ", burst " + l.burst();
        } else if (limit instanceof LeakyBucket l) {
            return l.limit() + "r/" + human(l.period()) + " burst=" + l.burst() + (l.nodelay() ? " nodelay" : "");
        } else if (limit instanceof SmoothBursty l) {
            return l.permitsPerSecond() + "/s, " + l.maxBurstSeconds() + " s burst";
        } else if (limit instanceof SmoothWarmingUp l) {
            return l.permitsPerSecond() + "/s, warm-up " + human(l.warmup());
        } else if (limit instanceof RefreshPeriod l) {
            return l.limitForPeriod() + " per " + human(l.refreshPeriod()) + " cycle";
        } else if (limit instanceof Concurrency l) {
            return l.maxConcurrent() + " in flight, lease " + human(l.leaseTtl());
        } else if (limit instanceof io.sluice.CalendarWindow l) {
            return l.limit() + " per calendar " + l.period().name().toLowerCase(java.util.Locale.ROOT) + " in " + l.zone();
        }
        return limit.toString();
    }

    private static String human(Duration d) {
        long ms = d.toMillis();
        return ms % 1000 == 0 ? (ms / 1000) + "s" : ms + "ms";
    }
}
