package io.sluice.redis.fleet;

import io.sluice.Concurrency;
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
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The rules {@link FleetAccuracyIT} hammers from several JVMs ({@link FleetWorker} builds them by name), each
 * with the exact number of permits it admits over a run that is far shorter than any of its refill periods.
 *
 * <p>Every limit refills, leaks or forgets at most once per hour (or per 366 days), and a run takes seconds,
 * so nothing comes back during the run: the exact total is the bound ({@link #expected}, checked against the
 * span the run took by Redis server time). Limits aligned to the epoch ({@code fixed_window},
 * {@code sliding_window}) use 366-day windows, and a run that straddles one of their boundaries anyway is
 * repeated on a fresh key ({@link #alignedPeriodMicros}).
 *
 * <p>Where a case names a {@link #checkedLimit}, the state of that (looser) limit must hold exactly the bound
 * afterwards: a rejection by another limit of the rule charged it nothing, under contention too.
 */
enum FleetCase {

    FIXED_WINDOW_EPOCH(365, Micros.DAYS_366, Micros.DAYS_366, null, FixedWindow.of(365, Duration.ofDays(366))),
    FIXED_WINDOW_FIRST_REQUEST(410, 0, Micros.HOUR, null,
            FixedWindow.of(410, Duration.ofHours(1)).withAlign(FixedWindow.Align.FIRST_REQUEST)),
    SLIDING_LOG(420, 0, Micros.HOUR, null, SlidingLog.of(420, Duration.ofHours(1))),
    SLIDING_WINDOW(430, Micros.DAYS_366, Micros.DAYS_366, null, SlidingWindow.of(430, Duration.ofDays(366))),
    ROLLING_WINDOW(440, 0, Micros.HOUR - Micros.MINUTE, null,
            RollingWindow.of(440, Duration.ofHours(1), Duration.ofMinutes(1))),
    /** Greedy refill of one token an hour: nothing trickles in during the run. */
    TOKEN_BUCKET(450, 0, Micros.HOUR, null, TokenBucket.of(450, 1, Duration.ofHours(1))),
    TOKEN_BUCKET_INTERVAL(460, 0, Micros.HOUR, null,
            TokenBucket.of(460, 1, Duration.ofHours(1)).withRefill(TokenBucket.Refill.INTERVAL)),
    /** One permit an hour with a burst of 470: T = 1 h, so exactly the burst. */
    GCRA(470, 0, Micros.HOUR, null, new Gcra("gcra", 1, Duration.ofHours(1), 470)),
    /** nginx {@code rate=1r/h burst=479 nodelay}: burst + 1 pass at once. */
    LEAKY_BUCKET_NODELAY(480, 0, Micros.HOUR, null,
            LeakyBucket.of(1, Duration.ofHours(1)).withBurst(479).withNodelay(true)),
    /** Cycles start at the key's first request, so the run lies inside the first cycle. */
    REFRESH_PERIOD(490, 0, Micros.HOUR, null, RefreshPeriod.of(490, Duration.ofHours(1))),
    /** Leases are never released and live an hour. */
    CONCURRENCY(500, 0, Micros.HOUR, null, Concurrency.of(500, Duration.ofHours(1))),
    /** Two fixed windows: the daily one binds; the hourly one must count exactly what was admitted. */
    MULTI_FIXED(300, 0, Micros.HOUR, "per_hour",
            FixedWindow.of(1000, Duration.ofHours(1)).withAlign(FixedWindow.Align.FIRST_REQUEST).named("per_hour"),
            FixedWindow.of(300, Duration.ofDays(1)).withAlign(FixedWindow.Align.FIRST_REQUEST).named("per_day")),
    /** The README's shape: a sliding log, a token bucket that binds, and a counter that must not over-count. */
    MULTI_MIXED(310, 0, Micros.HOUR, "per_day",
            SlidingLog.of(600, Duration.ofHours(1)).named("per_hour"),
            TokenBucket.of(310, 1, Duration.ofHours(1)).named("burst"),
            FixedWindow.of(2000, Duration.ofDays(1)).withAlign(FixedWindow.Align.FIRST_REQUEST).named("per_day"));

    /** Every algorithm that promises a hard bound on what it admits, so a fleet must admit exactly that. */
    static final Set<String> HARD_BOUND = Set.of("fixed_window", "sliding_log", "sliding_window", "rolling_window",
            "token_bucket", "gcra", "leaky_bucket", "refresh_period", "concurrency");

    /** The key every process hammers, under a fresh store prefix per run. */
    static final String KEY = "hot";

    private final long bound;
    private final long alignedPeriodMicros;
    private final long quietMicros;
    private final String checkedLimit;
    private final List<Limit> limits;

    FleetCase(long bound, long alignedPeriodMicros, long quietMicros, String checkedLimit, Limit... limits) {
        this.bound = bound;
        this.alignedPeriodMicros = alignedPeriodMicros;
        this.quietMicros = quietMicros;
        this.checkedLimit = checkedLimit;
        this.limits = List.of(limits);
    }

    /** The rule, named after the case. */
    Rule rule() {
        return Rule.of(ruleName(), limits);
    }

    String ruleName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }

    /** The algorithms the rule uses. */
    Set<String> algorithms() {
        Set<String> names = new LinkedHashSet<>();
        for (Limit l : limits) {
            names.add(l.algorithm());
        }
        return names;
    }

    /** What the rule admits under load far above it. */
    long bound() {
        return bound;
    }

    /**
     * The epoch-aligned period whose boundaries restart the limit (0 for none): a run that straddles one
     * admits more, and is repeated.
     */
    long alignedPeriodMicros() {
        return alignedPeriodMicros;
    }

    /**
     * An upper bound on the permits that can come back within {@code spanMicros} of the first admission: none
     * before {@code quietMicros} have passed (no token, leaked unit, new cycle, entry or bucket leaving the
     * window, expired lease), at most the bound per such period after it. Zero for the spans of these runs,
     * which is what makes {@link #expected} exact.
     */
    long replenishedWithin(long spanMicros) {
        return quietMicros == 0 ? 0 : spanMicros / quietMicros * bound;
    }

    /** The exact total the fleet must admit over a run that took {@code spanMicros} of server time. */
    long expected(long spanMicros) {
        return bound + replenishedWithin(spanMicros);
    }

    /** A {@code fixed_window} limit of the rule whose stored count must equal the bound afterwards, or null. */
    String checkedLimit() {
        return checkedLimit;
    }

    /** Durations in microseconds, in a holder: enum constants cannot use the enum's own static fields. */
    private static final class Micros {
        static final long MINUTE = 60_000_000L;
        static final long HOUR = 60 * MINUTE;
        static final long DAYS_366 = 366 * 24 * HOUR;
    }
}
