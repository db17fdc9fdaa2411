package io.sluice.internal.algorithm;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.CalendarWindow;
import io.sluice.CalendarWindow.Period;
import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.temporal.TemporalAdjusters;
import java.time.zone.ZoneOffsetTransition;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The calendar windows across daylight-saving changes, month ends, leap years and week starts, in zones with
 * one-hour shifts (Europe/Berlin, America/New_York), a 30-minute shift (Australia/Lord_Howe), no shift and a
 * half-hour offset (Asia/Kolkata), and a shift at midnight (America/Santiago, whose spring-forward skips
 * midnight). Instants are drawn near the zones' transitions as often as anywhere.
 */
class CalendarPeriodsPropertiesTest {

    private static final List<ZoneId> ZONES = List.of(ZoneId.of("Europe/Berlin"), ZoneId.of("America/New_York"),
            ZoneId.of("Australia/Lord_Howe"), ZoneId.of("Asia/Kolkata"), ZoneId.of("America/Santiago"),
            ZoneId.of("UTC"));

    private static final long SEC = 1_000_000L;
    private static final long HOUR = 3_600 * SEC;
    private static final long DAY = 24 * HOUR;

    @Provide
    Arbitrary<CalendarWindow> limits() {
        return Combinators.combine(Arbitraries.of(Period.class), Arbitraries.of(ZONES), Arbitraries.of(DayOfWeek.class))
                .as((period, zone, first) -> new CalendarWindow("c", 10, period, zone, first));
    }

    /** Near a transition of the zone (1970 to 2100) half of the time, anywhere on Sluice's clock otherwise. */
    @Provide
    Arbitrary<Long> instants() {
        Arbitrary<Long> anywhere = Arbitraries.longs().between(0, Arith.MAX_TIME);
        Arbitrary<Long> recent = Arbitraries.longs().between(0, 4_102_444_800L * SEC); // 1970 to 2100
        Arbitrary<Long> offset = Arbitraries.longs().between(-2 * DAY, 2 * DAY);
        Arbitrary<Long> nearTransition = Combinators.combine(Arbitraries.of(ZONES), recent, offset)
                .as((zone, t, d) -> {
                    ZoneOffsetTransition next = zone.getRules().nextTransition(Instant.ofEpochSecond(t / SEC));
                    long at = next == null ? t : next.getInstant().getEpochSecond() * SEC;
                    return Math.max(0, Math.min(Arith.MAX_TIME, at + d));
                });
        return Arbitraries.oneOf(anywhere, recent, nearTransition, nearTransition);
    }

    /** The window contains t; its start and end are windows' boundaries too; windows tile the time line. */
    @Property(tries = 3_000)
    void windowsContainTheirInstantAndTile(@ForAll("limits") CalendarWindow limit, @ForAll("instants") long t) {
        long[] w = CalendarPeriods.window(limit, t);
        assertThat(w[0]).as("start").isLessThanOrEqualTo(t);
        assertThat(w[1]).as("end").isGreaterThan(t);
        assertThat(CalendarPeriods.window(limit, w[0])).as("window of its start").containsExactly(w);
        if (w[1] != CalendarPeriods.END) {
            assertThat(CalendarPeriods.window(limit, w[1] - 1)).as("window of its last µs").containsExactly(w);
            assertThat(CalendarPeriods.window(limit, w[1])[0]).as("the next window starts at the end").isEqualTo(w[1]);
        }
        if (w[0] > 0) {
            assertThat(CalendarPeriods.window(limit, w[0] - 1)[1]).as("the previous window ends at the start")
                    .isEqualTo(w[0]);
        }
    }

    /**
     * A window starts where the wall clock shows a unit start, or where a transition skips one; its length is
     * the unit's, give or take the zone's shifts inside it.
     */
    @Property(tries = 3_000)
    void windowsStartAtWallClockUnitStarts(@ForAll("limits") CalendarWindow limit, @ForAll("instants") long t) {
        long[] w = CalendarPeriods.window(limit, t);
        Instant start = Instant.ofEpochSecond(Math.floorDiv(w[0], SEC));
        LocalDateTime local = LocalDateTime.ofInstant(start, limit.zone());
        ZoneOffsetTransition jump = limit.zone().getRules().previousTransition(start.plusSeconds(1));
        boolean atUnitStart = CalendarPeriods.unitStart(limit, local).equals(local);
        boolean atSkippedUnitStart = jump != null && jump.getInstant().equals(start) && jump.isGap();
        assertThat(atUnitStart || atSkippedUnitStart).as("start " + start + " (" + local + ")").isTrue();
        if (limit.period() == Period.WEEK && atUnitStart) {
            assertThat(local.getDayOfWeek()).isEqualTo(limit.weekStartsOn());
        }
        if (w[1] != CalendarPeriods.END) {
            long nominal = switch (limit.period()) {
                case MINUTE -> 60 * SEC;
                case HOUR -> HOUR;
                case DAY -> DAY;
                case WEEK -> 7 * DAY;
                case MONTH -> 31 * DAY;
                case YEAR -> 366 * DAY;
            };
            long shortest = switch (limit.period()) {
                case MONTH -> 28 * DAY;
                case YEAR -> 365 * DAY;
                default -> nominal;
            };
            // Shifts inside one window add or remove an hour or so (Lord_Howe: 30 minutes; in 1981 its standard
            // offset moved too, so that year was 90 minutes short); a minute window absorbs a whole fall-back
            // overlap, and a skipped unit shortens or merges windows.
            assertThat(w[1] - w[0]).as("length of " + start).isPositive()
                    .isLessThanOrEqualTo(nominal + 2 * HOUR);
            if (limit.period() != Period.MINUTE && limit.period() != Period.HOUR) {
                assertThat(w[1] - w[0]).as("length of " + start).isGreaterThanOrEqualTo(shortest - 2 * HOUR);
            }
        }
    }

    /** Days, weeks, months and years start at midnight as java.time resolves it ({@code atStartOfDay(zone)}). */
    @Property(tries = 2_000)
    void dateWindowsMatchJavaTimesStartOfDay(@ForAll("limits") CalendarWindow limit, @ForAll("instants") long t) {
        if (limit.period() == Period.MINUTE || limit.period() == Period.HOUR || t > 4_102_444_800L * SEC) {
            return;
        }
        LocalDate date = LocalDateTime.ofInstant(Instant.ofEpochSecond(t / SEC), limit.zone()).toLocalDate();
        LocalDate first = switch (limit.period()) {
            case WEEK -> date.with(TemporalAdjusters.previousOrSame(limit.weekStartsOn()));
            case MONTH -> date.withDayOfMonth(1);
            case YEAR -> date.withDayOfYear(1);
            default -> date;
        };
        LocalDate next = switch (limit.period()) {
            case WEEK -> first.plusWeeks(1);
            case MONTH -> first.plusMonths(1);
            case YEAR -> first.plusYears(1);
            default -> first.plusDays(1);
        };
        // None of these zones shifts its clock back across midnight, so the oracle holds everywhere.
        assertThat(CalendarPeriods.window(limit, t)).containsExactly(micros(first.atStartOfDay(limit.zone())),
                micros(next.atStartOfDay(limit.zone())));
    }

    // ------------------------------------------------------------------------------------------ examples

    @Example
    void daysOfTwentyThreeAndTwentyFiveHoursInBerlinAndNewYork() {
        assertThat(dayLength("Europe/Berlin", "2026-03-29")).isEqualTo(Duration.ofHours(23));
        assertThat(dayLength("Europe/Berlin", "2026-10-25")).isEqualTo(Duration.ofHours(25));
        assertThat(dayLength("Europe/Berlin", "2026-10-26")).isEqualTo(Duration.ofHours(24));
        assertThat(dayLength("America/New_York", "2026-03-08")).isEqualTo(Duration.ofHours(23));
        assertThat(dayLength("America/New_York", "2026-11-01")).isEqualTo(Duration.ofHours(25));
    }

    @Example
    void lordHoweShiftsByHalfAnHour() {
        assertThat(dayLength("Australia/Lord_Howe", "2026-04-05")).isEqualTo(Duration.ofMinutes(24 * 60 + 30));
        assertThat(dayLength("Australia/Lord_Howe", "2026-10-04")).isEqualTo(Duration.ofMinutes(23 * 60 + 30));
        // Clocks go from 02:00 (+11) back to 01:30 (+10:30): the 1 a.m. hour lasts 90 minutes.
        CalendarWindow hours = limit(Period.HOUR, "Australia/Lord_Howe");
        assertThat(window(hours, "2026-04-04T15:10:00Z")).containsExactly(at("2026-04-04T14:00:00Z"),
                at("2026-04-04T15:30:00Z"));
        // Clocks go from 02:00 (+10:30) to 02:30 (+11): the 2 a.m. hour lasts 30 minutes.
        assertThat(window(hours, "2026-10-03T15:40:00Z")).containsExactly(at("2026-10-03T15:30:00Z"),
                at("2026-10-03T16:00:00Z"));
    }

    @Example
    void kolkataHasHalfHourAlignedHoursAndNoShift() {
        assertThat(window(limit(Period.HOUR, "Asia/Kolkata"), "2026-06-01T10:45:00Z"))
                .containsExactly(at("2026-06-01T10:30:00Z"), at("2026-06-01T11:30:00Z"));
        assertThat(dayLength("Asia/Kolkata", "2026-03-29")).isEqualTo(Duration.ofHours(24));
        assertThat(window(limit(Period.DAY, "Asia/Kolkata"), "2026-06-01T20:00:00Z"))
                .containsExactly(at("2026-06-01T18:30:00Z"), at("2026-06-02T18:30:00Z"));
    }

    @Example
    void newYorksRepeatedHourIsOneWindowAndItsSkippedHourNone() {
        CalendarWindow hours = limit(Period.HOUR, "America/New_York");
        assertThat(window(hours, "2026-11-01T06:30:00Z")).containsExactly(at("2026-11-01T05:00:00Z"),
                at("2026-11-01T07:00:00Z"));
        // 02:00 EST is skipped: 01:00 EST to 03:00 EDT is one hour of real time.
        assertThat(window(hours, "2026-03-08T06:30:00Z")).containsExactly(at("2026-03-08T06:00:00Z"),
                at("2026-03-08T07:00:00Z"));
    }

    @Example
    void santiagosSkippedMidnightOpensTheDayWhenTheClockJumps() {
        // 2026-09-06: 00:00 (-04) becomes 01:00 (-03); the day opens at 04:00Z and lasts 23 hours.
        assertThat(window(limit(Period.DAY, "America/Santiago"), "2026-09-06T12:00:00Z"))
                .containsExactly(at("2026-09-06T04:00:00Z"), at("2026-09-07T03:00:00Z"));
    }

    @Example
    void monthEndsAndLeapYears() {
        CalendarWindow months = limit(Period.MONTH, "Europe/Berlin");
        // February 2024 (leap): 29 days; February 2100 (not leap: divisible by 100, not by 400): 28; 2000: 29.
        assertThat(length(months, "2024-02-10T12:00:00Z")).isEqualTo(Duration.ofDays(29));
        assertThat(length(months, "2100-02-10T12:00:00Z")).isEqualTo(Duration.ofDays(28));
        assertThat(length(months, "2000-02-10T12:00:00Z")).isEqualTo(Duration.ofDays(29));
        // March 2026 holds the spring-forward: 31 days less an hour; October the fall-back: 31 days and an hour.
        assertThat(length(months, "2026-03-31T21:59:59Z")).isEqualTo(Duration.ofDays(31).minusHours(1));
        assertThat(window(months, "2026-03-31T22:00:00Z")[0]).isEqualTo(at("2026-03-31T22:00:00Z"));
        assertThat(length(months, "2026-10-15T00:00:00Z")).isEqualTo(Duration.ofDays(31).plusHours(1));
        assertThat(length(limit(Period.YEAR, "Europe/Berlin"), "2024-07-01T00:00:00Z")).isEqualTo(Duration.ofDays(366));
        assertThat(length(limit(Period.YEAR, "Europe/Berlin"), "2026-07-01T00:00:00Z")).isEqualTo(Duration.ofDays(365));
    }

    @Example
    void weeksStartOnTheConfiguredDay() {
        // Wednesday 2026-11-25, noon in Berlin.
        CalendarWindow monday = limit(Period.WEEK, "Europe/Berlin");
        assertThat(window(monday, "2026-11-25T11:00:00Z")).containsExactly(at("2026-11-22T23:00:00Z"),
                at("2026-11-29T23:00:00Z"));
        CalendarWindow sunday = monday.withWeekStartsOn(DayOfWeek.SUNDAY);
        assertThat(window(sunday, "2026-11-25T11:00:00Z")).containsExactly(at("2026-11-21T23:00:00Z"),
                at("2026-11-28T23:00:00Z"));
        CalendarWindow wednesday = monday.withWeekStartsOn(DayOfWeek.WEDNESDAY);
        assertThat(window(wednesday, "2026-11-25T11:00:00Z")[0]).isEqualTo(at("2026-11-24T23:00:00Z"));
        // A week holding the fall-back is an hour longer.
        assertThat(length(monday, "2026-10-22T12:00:00Z")).isEqualTo(Duration.ofDays(7).plusHours(1));
    }

    @Example
    void theClockEndsTheLastWindowAndTheTableAroundNowHasFourBoundaries() {
        CalendarWindow years = limit(Period.YEAR, "UTC");
        assertThat(CalendarPeriods.window(years, Arith.MAX_TIME)[1]).isEqualTo(CalendarPeriods.END);
        assertThat(CalendarPeriods.around(years, Arith.MAX_TIME)).hasSize(3);
        long t = at("2026-11-25T11:00:00Z");
        CalendarWindow days = limit(Period.DAY, "Europe/Berlin");
        assertThat(CalendarPeriods.around(days, t)).containsExactly(at("2026-11-23T23:00:00Z"),
                at("2026-11-24T23:00:00Z"), at("2026-11-25T23:00:00Z"), at("2026-11-26T23:00:00Z"));
    }

    // ------------------------------------------------------------------------------------------ helpers

    private static CalendarWindow limit(Period period, String zone) {
        return new CalendarWindow("c", 10, period, ZoneId.of(zone), DayOfWeek.MONDAY);
    }

    private static long at(String instant) {
        return Instant.parse(instant).getEpochSecond() * SEC;
    }

    private static long micros(ZonedDateTime z) {
        return z.toEpochSecond() * SEC;
    }

    private static long[] window(CalendarWindow limit, String instant) {
        return CalendarPeriods.window(limit, at(instant));
    }

    private static Duration length(CalendarWindow limit, String instant) {
        long[] w = window(limit, instant);
        return Duration.ofNanos((w[1] - w[0]) * 1_000);
    }

    /** The length of the day window holding noon of {@code date} in {@code zone}. */
    private static Duration dayLength(String zone, String date) {
        ZonedDateTime noon = LocalDate.parse(date).atTime(12, 0).atZone(ZoneId.of(zone));
        long[] w = CalendarPeriods.window(limit(Period.DAY, zone), micros(noon));
        List<Long> check = new ArrayList<>(List.of(w[0], w[1]));
        assertThat(check).isSorted();
        return Duration.ofNanos((w[1] - w[0]) * 1_000);
    }
}
