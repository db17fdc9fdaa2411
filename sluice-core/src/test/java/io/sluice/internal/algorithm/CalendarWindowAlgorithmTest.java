package io.sluice.internal.algorithm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.CalendarWindow;
import io.sluice.CalendarWindow.Period;
import io.sluice.FixedWindow;
import io.sluice.internal.algorithm.CalendarWindowAlgorithm.State;
import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

class CalendarWindowAlgorithmTest {

    private static final long SEC = 1_000_000L;
    private static final long MIN = 60 * SEC;
    private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");

    private static long at(String instant) {
        return Instant.parse(instant).getEpochSecond() * SEC;
    }

    /** The essay's example: 3 per day in Berlin on the 23-hour day of 2026-03-29. */
    @Example
    void theEssaysWorkedExample() {
        CalendarWindowAlgorithm daily = new CalendarWindowAlgorithm(CalendarWindow.of(3, Period.DAY, BERLIN));

        Step<State> first = daily.step(null, at("2026-03-29T08:00:00Z"), 2, 0);
        assertThat(first.allowed()).isTrue();
        assertThat(first.remaining()).isEqualTo(1);
        assertThat(first.admitted()).isEqualTo(new State(at("2026-03-29T22:00:00Z"), 2));
        assertThat(first.resetAfterMicros()).isEqualTo(14 * 60 * MIN);

        Step<State> late = daily.step(first.admitted(), at("2026-03-29T21:30:00Z"), 2, 0);
        assertThat(late.allowed()).isFalse();
        assertThat(late.retryAfterMicros()).isEqualTo(30 * MIN).isEqualTo(late.resetAfterMicros());
        assertThat(late.remaining()).isEqualTo(1);
        assertThat(late.rejected()).isSameAs(first.admitted());

        Step<State> midnight = daily.step(first.admitted(), at("2026-03-29T22:00:00Z"), 2, 0);
        assertThat(midnight.allowed()).isTrue();
        assertThat(midnight.admitted()).isEqualTo(new State(at("2026-03-30T22:00:00Z"), 2));
        assertThat(midnight.resetAfterMicros()).isEqualTo(24 * 60 * MIN);
    }

    @Example
    void peeksStoreNothingAndOversizedRequestsNeverPass() {
        CalendarWindowAlgorithm monthly = new CalendarWindowAlgorithm(CalendarWindow.of(10, Period.MONTH, BERLIN));
        long t = at("2026-11-25T12:00:00Z");
        Step<State> peek = monthly.step(null, t, 0, 0);
        assertThat(peek.allowed()).isTrue();
        assertThat(peek.remaining()).isEqualTo(10);
        assertThat(peek.resetAfterMicros()).isZero();
        assertThat(peek.admitted()).isNull();
        Step<State> tooMany = monthly.step(null, t, 11, 0);
        assertThat(tooMany.allowed()).isFalse();
        assertThat(tooMany.retryAfterMicros()).isEqualTo(Arith.NEVER);
        assertThat(monthly.grantable(new State(at("2026-11-30T23:00:00Z"), 7), t, 5)).isEqualTo(3);
        assertThat(monthly.grantable(new State(at("2026-11-30T23:00:00Z"), 7), at("2026-11-30T23:00:00Z"), 5))
                .isEqualTo(5);
    }

    @Example
    void migrationKeepsTheCountOnlyWhenTheWindowsStayTheSame() {
        CalendarWindow weekly = new CalendarWindow("w", 5, Period.WEEK, BERLIN, DayOfWeek.MONDAY);
        State s = new State(at("2026-11-29T23:00:00Z"), 4);
        long t = at("2026-11-25T12:00:00Z");
        assertThat(new CalendarWindowAlgorithm(weekly.withLimit(9)).migrate(s, weekly, t)).isSameAs(s);
        assertThat(new CalendarWindowAlgorithm(weekly.withWeekStartsOn(DayOfWeek.SUNDAY)).migrate(s, weekly, t))
                .isNull();
        assertThat(new CalendarWindowAlgorithm(weekly.withZone(ZoneId.of("UTC"))).migrate(s, weekly, t)).isNull();
        assertThat(new CalendarWindowAlgorithm(weekly.withPeriod(Period.DAY)).migrate(s, weekly, t)).isNull();
        CalendarWindow daily = weekly.withPeriod(Period.DAY);
        // The first day of the week means nothing to a daily window.
        assertThat(new CalendarWindowAlgorithm(daily.withWeekStartsOn(DayOfWeek.FRIDAY)).migrate(s, daily, t))
                .isSameAs(s);
        assertThatThrownBy(() -> new CalendarWindowAlgorithm(weekly)
                .migrate(s, FixedWindow.of(1, Duration.ofSeconds(1)), t))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Example
    void invalidParametersNameTheirField() {
        assertThatThrownBy(() -> CalendarWindow.of(0, Period.DAY, BERLIN)).hasMessageStartingWith("limit must be in");
        assertThatThrownBy(() -> CalendarWindow.of(1, null, BERLIN)).hasMessageStartingWith("period must not be null");
        assertThatThrownBy(() -> CalendarWindow.of(1, Period.DAY, null)).hasMessageStartingWith("zone must not be null");
        assertThatThrownBy(() -> CalendarWindow.of(1, Period.DAY, BERLIN).withWeekStartsOn(null))
                .hasMessageStartingWith("weekStartsOn must not be null");
    }

    // ------------------------------------------------------------------------------------------ properties

    private static final List<ZoneId> ZONES = List.of(BERLIN, ZoneId.of("America/New_York"),
            ZoneId.of("Australia/Lord_Howe"), ZoneId.of("Asia/Kolkata"));

    /** A request: wait {@code gap} µs, then ask for {@code permits}. */
    record Op(long gap, long permits) {}

    record Scenario(CalendarWindow limit, long start, List<Op> ops) {}

    @Provide
    Arbitrary<Scenario> scenarios() {
        Arbitrary<CalendarWindow> limits = Combinators.combine(Arbitraries.longs().between(1, 6),
                        Arbitraries.of(Period.MINUTE, Period.HOUR, Period.DAY), Arbitraries.of(ZONES),
                        Arbitraries.of(DayOfWeek.class))
                .as((limit, period, zone, first) -> new CalendarWindow("c", limit, period, zone, first));
        // Starts a few hours before the zones' 2026 transitions, so sequences cross them.
        Arbitrary<Long> starts = Arbitraries.of(at("2026-03-28T20:00:00Z"), at("2026-03-08T03:00:00Z"),
                        at("2026-11-01T02:00:00Z"), at("2026-10-25T00:00:00Z"), at("2026-04-04T12:00:00Z"),
                        at("2026-10-03T13:00:00Z"), at("2024-02-28T20:00:00Z"))
                .flatMap(t -> Arbitraries.longs().between(t - 3_600 * SEC, t + 3_600 * SEC));
        Arbitrary<Op> ops = Combinators.combine(
                Arbitraries.oneOf(Arbitraries.longs().between(0, 20 * MIN), Arbitraries.longs().between(0, 3 * SEC)),
                Arbitraries.longs().between(1, 4)).as(Op::new);
        return Combinators.combine(limits, starts, ops.list().ofMinSize(1).ofMaxSize(80)).as(Scenario::new);
    }

    /**
     * Never more than the limit per calendar window; a rejection's retry-after ends exactly at the window's end,
     * where the same request passes.
     */
    @Property(tries = 600)
    void neverMoreThanTheLimitPerWindowAndRetryAfterIsTheNextBoundary(@ForAll("scenarios") Scenario s) {
        CalendarWindowAlgorithm algorithm = new CalendarWindowAlgorithm(s.limit());
        Map<Long, Long> admittedPerWindow = new HashMap<>();
        State state = null;
        long now = s.start();
        for (Op op : s.ops()) {
            now += op.gap();
            long[] window = CalendarPeriods.window(s.limit(), now);
            Step<State> step = algorithm.step(state, now, op.permits(), 0);
            if (step.allowed()) {
                long total = admittedPerWindow.merge(window[0], op.permits(), Long::sum);
                assertThat(total).as("admitted in the window opened at " + window[0]).isLessThanOrEqualTo(
                        s.limit().limit());
                assertThat(now + step.resetAfterMicros()).as("reset at the window end").isEqualTo(window[1]);
                state = step.admitted();
            } else if (op.permits() <= s.limit().limit()) {
                assertThat(now + step.retryAfterMicros()).as("retry at the window end").isEqualTo(window[1]);
                assertThat(algorithm.step(step.rejected(), now + step.retryAfterMicros(), op.permits(), 0).allowed())
                        .isTrue();
                state = step.rejected();
            }
            // admitted in this window = what the state says
            long inWindow = admittedPerWindow.getOrDefault(window[0], 0L);
            assertThat(algorithm.grantable(state, now, Long.MAX_VALUE)).isEqualTo(s.limit().limit() - inWindow);
        }
    }
}
