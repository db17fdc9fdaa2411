package io.sluice.rules;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.sluice.CalendarWindow;
import io.sluice.CalendarWindow.Period;
import io.sluice.Rule;
import java.time.DayOfWeek;
import java.time.ZoneId;
import org.junit.jupiter.api.Test;

/** {@code calendar_window} in rule files: its parameters, defaults, errors naming the field, and RuleText. */
class CalendarWindowRuleTest {

    @Test
    void everyParameterAndTheDefaultWeekStart() throws Exception {
        RuleFile file = RuleFile.parse("calendar.yaml", """
                limits:
                  tenant_month: {algorithm: calendar_window, limit: 10000, period: month, zone: Europe/Berlin}
                  tenant_week: {algorithm: calendar_window, limit: 3000, period: week, zone: America/New_York, week_starts_on: sunday}
                rules:
                  tenant: {limits: [tenant_month, tenant_week]}
                """);
        assertThat(file.limits().get("tenant_month")).isEqualTo(
                CalendarWindow.of(10_000, Period.MONTH, ZoneId.of("Europe/Berlin")).named("tenant_month"));
        assertThat(file.limits().get("tenant_week")).isEqualTo(new CalendarWindow("tenant_week", 3_000, Period.WEEK,
                ZoneId.of("America/New_York"), DayOfWeek.SUNDAY));
    }

    @Test
    void ruleTextWritesWhatItReads() throws Exception {
        Rule rule = Rule.of("tenant", new CalendarWindow("per_day", 500, Period.DAY, ZoneId.of("Australia/Lord_Howe"),
                DayOfWeek.FRIDAY));
        String text = RuleText.of(rule);
        assertThat(text).contains("\"zone\":\"Australia/Lord_Howe\"").contains("\"period\":\"day\"")
                .contains("\"week_starts_on\":\"friday\"");
        assertThat(RuleText.parse("text", text)).isEqualTo(rule);
    }

    @Test
    void errorsNameTheFieldAndWhatWasExpected() {
        assertError("limits:\n  m: {algorithm: calendar_window, limit: 5, period: month, zone: Europe/Berln}\n",
                "limits.m.zone", "expected a time zone ID such as Europe/Berlin or UTC; was \"Europe/Berln\"");
        assertError("limits:\n  m: {algorithm: calendar_window, limit: 5, period: fortnight, zone: UTC}\n",
                "limits.m.period", "expected one of minute, hour, day, week, month, year; was \"fortnight\"");
        assertError("limits:\n  m: {algorithm: calendar_window, limit: 5, period: week, zone: UTC, week_starts_on: mon}\n",
                "limits.m.week_starts_on", "expected one of monday, tuesday, wednesday, thursday, friday, saturday, "
                        + "sunday; was \"mon\"");
        assertError("limits:\n  m: {algorithm: calendar_window, limit: 5, period: week}\n",
                "limits.m", "missing parameter zone (a time zone ID such as Europe/Berlin or UTC), required by "
                        + "calendar_window");
        assertError("limits:\n  m: {algorithm: calendar_window, limit: 0, period: week, zone: UTC}\n",
                "limits.m.limit", "limit must be in [1, 1000000000000], was 0");
        assertError("limits:\n  m: {algorithm: calendar_window, limit: 5, period: week, zone: 7}\n",
                "limits.m.zone", "a time zone ID");
    }

    private static void assertError(String yaml, String field, String problem) {
        Throwable t = catchThrowable(() -> RuleFile.parse("bad.yaml", yaml));
        assertThat(t).isInstanceOf(RuleFileException.class);
        RuleFileException e = (RuleFileException) t;
        assertThat(e.field()).as(e.getMessage()).isEqualTo(field);
        assertThat(e.problem()).as(e.getMessage()).contains(problem);
    }
}
