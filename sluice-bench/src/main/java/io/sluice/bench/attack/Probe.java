package io.sluice.bench.attack;

import java.net.http.HttpClient;
import java.util.List;

/** One attack on the running server; {@link AttackSuite} measures the server and a bystander around it. */
interface Probe {

    /** The row's variant, e.g. {@code invalid_unicode}. */
    String name();

    /** What the probe sends, in words (the row's config). */
    String describe();

    /** Attacks and returns what the server answered, and in words what held. */
    Outcome run(Target target) throws Exception;

    /** The server under attack. */
    record Target(String baseUrl, String host, int httpPort, int grpcPort, HttpClient http) {}

    /**
     * @param answers    the server's answers counted by outcome
     * @param finding    what held or did not, in words (null: nothing beyond the counts)
     * @param violations what the probe expects to hold and did not, each in words (empty: all held); the
     *                   bounds are generous, so that a loaded machine does not make one up
     * @param overAdmitted admissions past a limit, for the row's {@code over_admitted} (null: the probe does
     *                   not count them)
     */
    record Outcome(Answers answers, String finding, List<String> violations, Long overAdmitted) {
        public Outcome {
            violations = List.copyOf(violations);
        }

        /** An outcome that the probe judges, without counting admissions. */
        Outcome(Answers answers, String finding, List<String> violations) {
            this(answers, finding, violations, null);
        }

        /** An outcome that the probe does not judge beyond its counts. */
        Outcome(Answers answers, String finding) {
            this(answers, finding, List.of(), null);
        }
    }
}
