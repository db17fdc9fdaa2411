package io.sluice;

import java.time.DayOfWeek;
import java.time.ZoneId;

/**
 * {@code calendar_window}: at most {@code limit} permits per calendar minute, hour, day, week, month or year of
 * the wall clock in a time zone — "10,000 per month per tenant, reset at midnight Europe/Berlin on the 1st".
 *
 * <p>Windows. A window starts at the first instant the zone's wall clock shows the start of a calendar unit
 * (a whole minute, a whole hour, midnight, midnight of {@code weekStartsOn}, midnight of the 1st, midnight of
 * January 1st) and ends where the next one starts. So a day is 23 or 25 hours long on the days daylight saving
 * time starts or ends, a month is 28 to 31 days, and the reset and retry-after of a decision count to the real
 * next boundary. A unit start the clock skips (a spring-forward gap) opens its window at the instant the clock
 * jumps; a wall-clock time the clock shows twice (a fall-back overlap) opens a window only the first time, so
 * the repeated time belongs to the window that was open (the 1 a.m. hour of the night New York falls back lasts
 * two hours). Time zone rules are the JVM's ({@link java.time.zone.ZoneRulesProvider}): processes that share a
 * limit should run the same tzdata version.
 *
 * <p>Guarantee: at most {@code limit} admitted per window; as with {@link FixedWindow}, up to {@code 2 × limit}
 * can pass around a boundary. Memory: one counter and the window's end per key. The Redis store decides on
 * Redis server time although Lua has no time zone data: each call carries the boundaries of the windows around
 * the client's clock, and a server time outside them is an error (see docs/guide/algorithms.md, "Calendar
 * windows").
 *
 * <p>Changing the limit keeps the current window's count; changing the period, the zone, or (for weekly
 * windows) the first day of the week starts a new window at the next request.
 *
 * @param name         the name reported in decisions; default {@code "calendar_window"}
 * @param limit        permits per window, in [1, {@link Limit#MAX_COUNT}]
 * @param period       the calendar unit of a window
 * @param zone         the time zone whose wall clock the windows follow, e.g. {@code Europe/Berlin}
 * @param weekStartsOn the first day of a week, for {@link Period#WEEK}; default {@link DayOfWeek#MONDAY}
 */
public record CalendarWindow(String name, long limit, Period period, ZoneId zone, DayOfWeek weekStartsOn)
        implements Limit {

    /** The calendar unit of a window. */
    public enum Period {
        MINUTE, HOUR, DAY, WEEK, MONTH, YEAR
    }

    /** @throws IllegalArgumentException naming the invalid field and what was expected */
    public CalendarWindow {
        Checks.name(name, "name");
        Checks.count(limit, "limit");
        Checks.notNull(period, "period");
        Checks.notNull(zone, "zone");
        Checks.notNull(weekStartsOn, "weekStartsOn");
    }

    /** {@code limit} permits per calendar {@code period} in {@code zone}; weeks start on Monday. */
    public static CalendarWindow of(long limit, Period period, ZoneId zone) {
        return new CalendarWindow(AlgorithmName.CALENDAR_WINDOW.text(), limit, period, zone, DayOfWeek.MONDAY);
    }

    @Override
    public String algorithm() {
        return AlgorithmName.CALENDAR_WINDOW.text();
    }

    @Override
    public long maxPermits() {
        return limit;
    }

    @Override
    public CalendarWindow named(String name) {
        return new CalendarWindow(name, limit, period, zone, weekStartsOn);
    }

    public CalendarWindow withLimit(long limit) {
        return new CalendarWindow(name, limit, period, zone, weekStartsOn);
    }

    public CalendarWindow withPeriod(Period period) {
        return new CalendarWindow(name, limit, period, zone, weekStartsOn);
    }

    public CalendarWindow withZone(ZoneId zone) {
        return new CalendarWindow(name, limit, period, zone, weekStartsOn);
    }

    public CalendarWindow withWeekStartsOn(DayOfWeek weekStartsOn) {
        return new CalendarWindow(name, limit, period, zone, weekStartsOn);
    }
}
