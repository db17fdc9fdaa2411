package io.sluice.bench;

import java.util.List;

/** One group of measurements; a suite that cannot run (no Redis, no replay) returns rows that say why. */
public interface Suite {

    /** local, redis, memory, replay or server: the {@code suite} field of its rows. */
    String name();

    /** Measures and returns the rows. */
    List<Measurement> run(BenchContext context) throws Exception;
}
