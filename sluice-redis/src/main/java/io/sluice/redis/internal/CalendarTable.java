package io.sluice.redis.internal;

import io.sluice.CalendarWindow;
import io.sluice.internal.algorithm.CalendarPeriods;
import java.time.Instant;

/**
 * The parameter words of a {@code calendar_window} limit in one call: its fixed words (those its fingerprint
 * covers) followed by the boundaries of the windows around the client's clock ({@link CalendarPeriods#around}),
 * from which {@code calendar_window.lua} picks the window containing Redis's time: Lua in Redis has no time zone
 * data. Thread-safe: the words of the current window are computed once and reused until the client's clock
 * leaves it.
 *
 * <p>The client's clock: the store's clock when it sends client time; otherwise this host's wall clock
 * ({@link Instant#now()}, which follows NTP, unlike {@code io.sluice.Clock.system()}), used only to choose the
 * table. The script refuses a server time outside the table, so the two clocks may differ by up to one window.
 */
final class CalendarTable {

    /** The boundaries sent for one window of the client's clock. */
    private record Words(long start, long end, String words) {}

    private final CalendarWindow limit;
    private final String fixedWords;
    private volatile Words last;

    CalendarTable(CalendarWindow limit, String fixedWords) {
        this.limit = limit;
        this.fixedWords = fixedWords;
    }

    /**
     * The words to send, for the script's ARGV[4] ({@code now} = "" for server time, or "micros,slackMillis").
     */
    String words(String now) {
        long clientNow = now.isEmpty() ? wallClockMicros() : Long.parseLong(clientMicros(now));
        Words w = last;
        if (w == null || clientNow < w.start() || clientNow >= w.end()) {
            long[] b = CalendarPeriods.around(limit, clientNow);
            StringBuilder s = new StringBuilder(fixedWords);
            for (long boundary : b) {
                s.append(' ').append(boundary);
            }
            w = new Words(b[1], b[2], s.toString());
            last = w;
        }
        return w.words();
    }

    private static String clientMicros(String now) {
        int comma = now.indexOf(',');
        return comma < 0 ? now : now.substring(0, comma);
    }

    private static long wallClockMicros() {
        Instant t = Instant.now();
        return t.getEpochSecond() * 1_000_000L + t.getNano() / 1_000;
    }
}
