package io.sluice.internal.algorithm;

import io.sluice.CalendarWindow;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.time.temporal.TemporalAdjusters;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.util.List;

/**
 * The windows of a {@link CalendarWindow}: where the window containing an instant starts and ends, in
 * microseconds since the epoch. Pure functions of the limit's period, zone and first day of the week, read from
 * the JVM's time zone rules; the Redis store sends their values to the script, which has no zone data.
 *
 * <h2>Boundaries</h2>
 *
 * A calendar unit starts at a local date-time {@code L}: a whole minute, a whole hour, a midnight, the midnight
 * of the week's first day, of the 1st of a month, of January 1st. Its <b>boundary</b> {@code B(L)} is the first
 * instant at which the zone's wall clock shows {@code L}: with offsets {@code o} valid at {@code L},
 * {@code min(L − o)}, the earlier of the two in an overlap; when a gap skips {@code L}, the instant of the
 * transition (where the clock jumps past it, as {@code LocalDate.atStartOfDay(zone)} resolves a skipped
 * midnight). {@code B} is non-decreasing in {@code L}: before a transition every {@code L − o} is before it, a
 * skipped {@code L} is it, and after it every {@code L − o} is after it; within an overlap the earlier offset
 * applies to every {@code L}. Two unit starts may share a boundary (a gap skips a whole minute or hour), and
 * then only the later one opens a window.
 *
 * <p>The window of {@code t} is {@code [max B(L) <= t, min B(L) > t)} over all unit starts {@code L}. To find
 * it: {@code L0} = the unit start of {@code t}'s wall-clock time; {@code B(L0) <= t} (monotonicity, and
 * {@code B(local(t)) <= t}); then step {@code L} forward unit by unit while {@code B(L) <= t}. The steps past
 * the first only happen in an overlap (a minute window while the clock repeats half an hour is found in 31
 * steps), never more than the overlap holds units.
 *
 * <pre>
 *   Europe/Berlin, day windows, 2026-03-29 (clocks go from 02:00 to 03:00):
 *     [2026-03-28T23:00Z, 2026-03-29T22:00Z)   23 hours
 *   America/New_York, hour windows, 2026-11-01 (01:00 EDT is followed by 01:00 EST):
 *     [05:00Z, 07:00Z)                          the 1 a.m. hour: two hours, one quota
 *   Australia/Lord_Howe, hour windows, 2026-04-05 (02:00 +11 becomes 01:30 +10:30):
 *     [14:00Z, 15:30Z)                          90 minutes
 * </pre>
 *
 * <h2>The end of the clock</h2>
 *
 * Sluice's clock ends at {@link Arith#MAX_TIME} (2^53 µs, in 2255). A boundary after it is reported as
 * {@link #END} = {@code MAX_TIME + 2}: the last window then contains every clock reading, and every value stays
 * an integer that a double (a Lua number) holds exactly. Boundaries are whole seconds (transitions and offsets
 * are), so they are exact in microseconds.
 */
public final class CalendarPeriods {

    /** The boundary reported for any boundary after {@link Arith#MAX_TIME}: after every clock reading. */
    public static final long END = Arith.MAX_TIME + 2;

    private static final long MICROS_PER_SECOND = 1_000_000L;

    private CalendarPeriods() {}

    /** The start and end of the window containing {@code now} (µs since the epoch), as {@code {start, end}}. */
    public static long[] window(CalendarWindow limit, long now) {
        ZoneRules rules = limit.zone().getRules();
        long second = Math.floorDiv(now, MICROS_PER_SECOND);
        LocalDateTime local = LocalDateTime.ofInstant(Instant.ofEpochSecond(second), limit.zone());
        LocalDateTime opened = unitStart(limit, local);
        LocalDateTime next = step(limit, opened, 1);
        long end = boundary(rules, next);
        while (end <= now) {
            opened = next;
            next = step(limit, next, 1);
            end = boundary(rules, next);
        }
        return new long[] {boundary(rules, opened), end};
    }

    /** The end of the window containing {@code now}: the next boundary after it. */
    public static long end(CalendarWindow limit, long now) {
        return window(limit, now)[1];
    }

    /**
     * The boundaries of the window before the one containing {@code now}, of that window and of the one after
     * it: four increasing values {@code {previousStart, start, end, nextEnd}}, or three when {@code end} is
     * already {@link #END}. The Redis store sends them with each call (see {@code calendar_window.lua}).
     */
    public static long[] around(CalendarWindow limit, long now) {
        long[] current = window(limit, now);
        long previousStart = window(limit, current[0] - 1)[0];
        if (current[1] == END) {
            return new long[] {previousStart, current[0], current[1]};
        }
        return new long[] {previousStart, current[0], current[1], window(limit, current[1])[1]};
    }

    /** The start of the calendar unit that contains the wall-clock time {@code local}. */
    static LocalDateTime unitStart(CalendarWindow limit, LocalDateTime local) {
        return switch (limit.period()) {
            case MINUTE -> local.truncatedTo(ChronoUnit.MINUTES);
            case HOUR -> local.truncatedTo(ChronoUnit.HOURS);
            case DAY -> local.toLocalDate().atStartOfDay();
            case WEEK -> local.toLocalDate().with(TemporalAdjusters.previousOrSame(limit.weekStartsOn()))
                    .atStartOfDay();
            case MONTH -> local.toLocalDate().withDayOfMonth(1).atStartOfDay();
            case YEAR -> local.toLocalDate().withDayOfYear(1).atStartOfDay();
        };
    }

    /** The unit start {@code n} units after (or before, for negative n) the unit start {@code start}. */
    static LocalDateTime step(CalendarWindow limit, LocalDateTime start, long n) {
        return switch (limit.period()) {
            case MINUTE -> start.plusMinutes(n);
            case HOUR -> start.plusHours(n);
            case DAY -> start.plusDays(n);
            case WEEK -> start.plusWeeks(n);
            case MONTH -> start.plusMonths(n);
            case YEAR -> start.plusYears(n);
        };
    }

    /** {@code B(L)} of the essay in microseconds, or {@link #END} past the end of the clock. */
    static long boundary(ZoneRules rules, LocalDateTime unitStart) {
        List<ZoneOffset> offsets = rules.getValidOffsets(unitStart);
        long second;
        if (offsets.isEmpty()) {
            ZoneOffsetTransition gap = rules.getTransition(unitStart);
            second = gap.getInstant().getEpochSecond();
        } else {
            second = Long.MAX_VALUE;
            for (ZoneOffset o : offsets) {
                second = Math.min(second, unitStart.toEpochSecond(o));
            }
        }
        if (second > Arith.MAX_TIME / MICROS_PER_SECOND) {
            return END;
        }
        return second * MICROS_PER_SECOND;
    }
}
