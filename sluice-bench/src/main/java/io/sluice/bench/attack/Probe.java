package io.sluice.bench.attack;

import java.net.http.HttpClient;

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
     * @param answers the server's answers counted by outcome
     * @param finding what held or did not, in words (null: nothing beyond the counts)
     */
    record Outcome(Answers answers, String finding) {}
}
