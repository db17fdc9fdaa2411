package io.sluice.testkit;

import java.util.Random;

/**
 * Seeds for tests that generate random sequences. By default a seed is fixed by the test's name, so a run of the
 * suite is reproducible: a build passes or fails on its code, never on the luck of a draw. A search for new
 * sequences is a deliberate run with {@code -Dsluice.seed=random} (a new seed per test, named in a failure
 * message); {@code -Dsluice.seed=<seed>} replays one.
 */
public final class Seeds {
    private Seeds() {
    }

    /** The seed for the random sequences of the test named {@code name} (see the class comment). */
    public static long of(String name) {
        String asked = System.getProperty("sluice.seed");
        if (asked == null) {
            return name.hashCode() * 0x9E3779B97F4A7C15L;
        }
        if (asked.equals("random")) {
            return new Random().nextLong();
        }
        try {
            return Long.parseLong(asked);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("sluice.seed: expected a long or \"random\", got \"" + asked + "\"");
        }
    }
}
