package io.sluice.bench.local;

/**
 * What the local benchmarks ask of a limiter. Every system gets the same limit in each mode, as far as its
 * parameters allow (the differences are stated in {@link #ALWAYS_GRANTED}).
 */
public enum LocalMode {
    /**
     * A limit so high nothing is rejected during a run: 10^12 per second, or a capacity or burst of 10^12 where
     * a library caps the rate (Sluice's GCRA at 10^6/s, Bucket4j at 10^9/s). Exceptions: Sluice's smooth_bursty
     * accepts at most 10^6 permits per second, so with one key it rejects most requests even here (the admitted
     * fraction in the results shows it); Resilience4j counts in an int, so it gets Integer.MAX_VALUE per second.
     */
    ALWAYS_GRANTED("always_granted"),
    /** 10 per second per key: after the first second nearly every request is rejected. */
    MOSTLY_REJECTED("mostly_rejected");

    /** Permits per second per key in {@link #MOSTLY_REJECTED}. */
    public static final long REJECTING_RATE = 10;
    /** Permits per second (and burst) per key in {@link #ALWAYS_GRANTED}. */
    public static final long GRANTING_RATE = 1_000_000_000_000L;

    private final String id;

    LocalMode(String id) {
        this.id = id;
    }

    /** The name in @Param values and in the results. */
    public String id() {
        return id;
    }

    public static LocalMode of(String id) {
        for (LocalMode m : values()) {
            if (m.id.equals(id)) {
                return m;
            }
        }
        throw new IllegalArgumentException("mode must be always_granted or mostly_rejected, was " + id);
    }

    /** The configuration in words, for the results. */
    public String describe() {
        return this == ALWAYS_GRANTED ? "10^12 per second (smooth_bursty: 10^6, the most it accepts)"
                : REJECTING_RATE + " per second per key";
    }
}
