package io.sluice.cli;

import static io.sluice.cli.ReplayRun.replay;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Bad rules, bad traces and bad command lines: exit code 1 or 2, and a message naming file, line and field. */
class ReplayBadInputTest {

    private static final String RULES = "limits:\n"
            + "  per_sec: {algorithm: fixed_window, limit: 2, window: 1s}\n"
            + "  in_flight: {algorithm: concurrency, max_concurrent: 1, lease_ttl: 10s}\n"
            + "rules:\n"
            + "  api: {limits: [per_sec]}\n";
    private static final String GOOD = "{\"t_ms\": 1000, \"key\": \"u1\", \"rule\": \"api\"}\n";

    @TempDir
    Path dir;
    private Path rules;

    @BeforeEach
    void writeRules() throws IOException {
        rules = write("rules.yaml", RULES);
    }

    private Path write(String name, String text) throws IOException {
        return Files.writeString(dir.resolve(name), text);
    }

    /** Replays {@code trace} (after one good line) and expects exit 1 with {@code message} on stderr. */
    private void assertBadTrace(String badLine, String message) throws IOException {
        Path trace = write("trace.jsonl", GOOD + badLine + "\n" + GOOD.replace("1000", "9000"));
        ReplayRun run = replay("--rules", rules, "--trace", trace);
        assertThat(run.exitCode()).as(run.err()).isEqualTo(1);
        assertThat(run.err().strip()).isEqualTo("sluice replay: " + trace + ":2: " + message);
    }

    @Test
    void malformedLine() throws IOException {
        assertBadTrace("{\"t_ms\": 1000, \"key\": \"u1\",, }",
                "not valid JSON (column 28): Unexpected character (',' (code 44)): was expecting double-quote to"
                        + " start field name");
        assertBadTrace("", "expected a JSON object (one request per line)");
    }

    @Test
    void lineThatIsNotOneObject() throws IOException {
        assertBadTrace("[1, 2]", "expected a JSON object (one request per line)");
        assertBadTrace(GOOD.strip() + " " + GOOD.strip(), "expected one JSON object per line; found more after it");
    }

    @Test
    void unknownAndDuplicateFields() throws IOException {
        assertBadTrace("{\"t_ms\": 1000, \"key\": \"u1\", \"rule\": \"api\", \"weight\": 2}",
                "weight: unknown field; a trace line has t_ms, op, key, rule, limit, permits, max_wait_ms, lease, params,"
                        + " keys, targets, estimate, lifetime_ms, ticket, actual");
        assertBadTrace("{\"t_ms\": 1000, \"key\": \"u1\", \"key\": \"u2\", \"rule\": \"api\"}",
                "key: appears twice in the line");
    }

    @Test
    void chargeAndSettleLinesNameTheirBadField() throws IOException {
        String charge = "{\"t_ms\": 1000, \"op\": \"charge\", \"key\": \"u1\", \"rule\": \"api\", ";
        assertBadTrace(charge + "\"ticket\": \"c1\"}", "estimate: missing; op charge needs it");
        assertBadTrace(charge + "\"estimate\": 1}", "ticket: missing; op charge needs it");
        assertBadTrace(charge + "\"estimate\": 0, \"ticket\": \"c1\"}",
                "estimate: expected an integer of at least 1; was 0");
        assertBadTrace(charge + "\"estimate\": 3, \"ticket\": \"c1\"}", "estimate: estimate must be in [1, 2] for"
                + " rule 'api', was 3");
        assertBadTrace(charge + "\"estimate\": 1, \"ticket\": \"c 1\"}",
                "ticket: a ticket name must be 1 to 64 characters of [A-Za-z0-9_-], has ' ' at index 1");
        assertBadTrace(charge + "\"estimate\": 1, \"ticket\": \"c1\", \"lifetime_ms\": 0}",
                "lifetime_ms: expected milliseconds in [1, 86400000]; was 0");
        assertBadTrace(charge + "\"permits\": 1, \"estimate\": 1, \"ticket\": \"c1\"}",
                "permits: op charge does not take permits");
        String settle = "{\"t_ms\": 1000, \"op\": \"settle\", \"key\": \"u1\", \"rule\": \"api\", ";
        assertBadTrace(settle + "\"ticket\": \"c1\"}", "actual: missing; op settle needs it");
        assertBadTrace(settle + "\"ticket\": \"c1\", \"actual\": -1}",
                "actual: expected an integer in [0, 1000000000000]; was -1");
        assertBadTrace(settle + "\"ticket\": \"c1\", \"actual\": 1, \"estimate\": 2}",
                "estimate: op settle does not take estimate");
    }

    @Test
    void aTicketNameStillOpenOrARuleThatCannotSettleIsAnError() throws IOException {
        Path trace = write("trace.jsonl", "{\"t_ms\": 1000, \"op\": \"charge\", \"key\": \"u1\", \"rule\": \"api\","
                + " \"estimate\": 1, \"ticket\": \"c1\"}\n"
                + "{\"t_ms\": 1001, \"op\": \"charge\", \"key\": \"u1\", \"rule\": \"api\", \"estimate\": 1,"
                + " \"ticket\": \"c1\"}\n");
        ReplayRun run = replay("--rules", rules, "--trace", trace);
        assertThat(run.exitCode()).as(run.err()).isEqualTo(1);
        assertThat(run.err().strip()).isEqualTo("sluice replay: " + trace + ":2: ticket: ticket \"c1\" of key \"u1\""
                + " is still open (charged on line 1); a ticket name must be unique per rule and key until its ticket"
                + " is settled or expires");

        Path leases = write("leases.jsonl", "{\"t_ms\": 1000, \"op\": \"charge\", \"key\": \"u1\","
                + " \"limit\": \"in_flight\", \"estimate\": 1, \"ticket\": \"c1\"}\n");
        ReplayRun refused = replay("--rules", rules, "--trace", leases);
        assertThat(refused.exitCode()).as(refused.err()).isEqualTo(1);
        assertThat(refused.err().strip()).startsWith("sluice replay: " + leases + ":1: limit: limit 'in_flight' of rule"
                + " 'limit:in_flight' is concurrency, which cannot settle a ticket");
    }

    @Test
    void fieldsOfTheWrongTypeOrRange() throws IOException {
        assertBadTrace("{\"t_ms\": \"1000\", \"key\": \"u1\", \"rule\": \"api\"}",
                "t_ms: expected a number of milliseconds; was the string \"1000\"");
        assertBadTrace("{\"t_ms\": 1000.0001, \"key\": \"u1\", \"rule\": \"api\"}",
                "t_ms: expected milliseconds with at most 3 decimals (whole microseconds); was 1000.0001");
        assertBadTrace("{\"t_ms\": -5, \"key\": \"u1\", \"rule\": \"api\"}",
                "t_ms: expected milliseconds in [0, 9007199254740.992]; was -5");
        assertBadTrace("{\"t_ms\": 1000, \"key\": \"u1\", \"rule\": \"api\", \"permits\": 1.5}",
                "permits: expected an integer; was 1.5");
        assertBadTrace("{\"t_ms\": 1000, \"key\": \"u1\", \"rule\": \"api\", \"permits\": 0}",
                "permits: expected an integer of at least 1; was 0");
        // -1 once meant "absent" inside the reader and was replayed as 1
        assertBadTrace("{\"t_ms\": 1000, \"key\": \"u1\", \"rule\": \"api\", \"permits\": -1}",
                "permits: expected an integer of at least 1; was -1");
        assertBadTrace("{\"t_ms\": 1000, \"op\": \"peek\", \"key\": \"u1\", \"rule\": \"api\", \"permits\": -1}",
                "permits: expected an integer of at least 0; was -1");
        assertBadTrace("{\"t_ms\": 1000, \"key\": 42, \"rule\": \"api\"}", "key: expected a string; was 42");
        assertBadTrace("{\"t_ms\": 1000, \"key\": \"\", \"rule\": \"api\"}", "key: key must be a non-empty string");
        assertBadTrace("{\"t_ms\": 1000, \"key\": \"u1\", \"rule\": \"api\", \"op\": \"take\"}",
                "op: expected one of try, try_at_most, acquire, peek, release, reset, set_limit, try_all, charge,"
                        + " settle; was \"take\"");
    }

    @Test
    void fieldsTheOpDoesNotTakeOrNeeds() throws IOException {
        assertBadTrace("{\"key\": \"u1\", \"rule\": \"api\"}",
                "t_ms: missing; every line needs its time in milliseconds since the Unix epoch");
        assertBadTrace("{\"t_ms\": 1000, \"rule\": \"api\"}", "key: missing; op try needs it");
        assertBadTrace("{\"t_ms\": 1000, \"key\": \"u1\"}",
                "rule: expected exactly one of rule (a rule name) and limit (a limit name, meaning a rule of that one"
                        + " limit)");
        assertBadTrace("{\"t_ms\": 1000, \"key\": \"u1\", \"rule\": \"api\", \"max_wait_ms\": 5}",
                "max_wait_ms: op try does not take max_wait_ms");
        assertBadTrace("{\"t_ms\": 1000, \"key\": \"u1\", \"limit\": \"in_flight\", \"op\": \"release\"}",
                "lease: missing; op release needs it");
        assertBadTrace("{\"t_ms\": 1000, \"op\": \"set_limit\", \"limit\": \"per_sec\"}",
                "params: missing; op set_limit needs it");
    }

    @Test
    void unknownRuleOrLimit() throws IOException {
        assertBadTrace("{\"t_ms\": 1000, \"key\": \"u1\", \"rule\": \"apii\"}",
                "rule: unknown rule \"apii\" in " + rules + "; it defines api");
        assertBadTrace("{\"t_ms\": 1000, \"key\": \"u1\", \"limit\": \"per_min\"}",
                "limit: unknown limit \"per_min\" in " + rules + "; it defines per_sec, in_flight");
    }

    @Test
    void invalidSetLimitParameters() throws IOException {
        assertBadTrace("{\"t_ms\": 1000, \"op\": \"set_limit\", \"limit\": \"per_sec\", \"params\": {\"limit\": 0}}",
                "params.limit: limit must be in [1, 1000000000000], was 0");
        assertBadTrace("{\"t_ms\": 1000, \"op\": \"set_limit\", \"limit\": \"per_sec\", \"params\": {\"window\": 5}}",
                "params.window: expected a duration: a number and a unit (us, ms, s, m, h, d), e.g. \"1m\" or"
                        + " \"0.5s\"; was the integer 5");
        assertBadTrace("{\"t_ms\": 1000, \"op\": \"set_limit\", \"limit\": \"per_sec\", \"params\": [1]}",
                "params: expected an object of limit parameters, e.g. {\"limit\": 20}; was a list");
    }

    @Test
    void requestNoRuleCouldGrant() throws IOException {
        assertBadTrace("{\"t_ms\": 1000, \"key\": \"u1\", \"rule\": \"api\", \"permits\": 3}",
                "permits: permits must be in [1, 2] for rule 'api', was 3");
    }

    @Test
    void badTryAllLines() throws IOException {
        String tryAll = "{\"t_ms\": 1000, \"op\": \"try_all\", ";
        assertBadTrace(tryAll + "\"rule\": \"api\"}", "keys: expected exactly one of keys (keys of the line's"
                + " rule or limit) and targets (a list of {\"rule\" or \"limit\", \"key\"})");
        assertBadTrace(tryAll + "\"rule\": \"api\", \"keys\": []}", "keys: expected at least one key");
        assertBadTrace(tryAll + "\"rule\": \"api\", \"keys\": \"u1\"}", "keys: expected a list; was the string \"u1\"");
        assertBadTrace(tryAll + "\"rule\": \"api\", \"keys\": [\"u1\", 2]}", "keys[1]: expected a key (a string); was 2");
        assertBadTrace(tryAll + "\"keys\": [\"u1\"]}", "rule: expected exactly one of rule (a rule name) and limit"
                + " (a limit name, meaning a rule of that one limit)");
        assertBadTrace(tryAll + "\"rule\": \"api\", \"targets\": [{\"rule\": \"api\", \"key\": \"u1\"}]}",
                "rule: op try_all does not take rule");
        assertBadTrace(tryAll + "\"targets\": [{\"rule\": \"api\"}]}", "targets[0].key: missing; a target needs its key");
        assertBadTrace(tryAll + "\"targets\": [{\"rule\": \"api\", \"limit\": \"per_sec\", \"key\": \"u1\"}]}",
                "targets[0]: expected exactly one of rule (a rule name) and limit (a limit name)");
        assertBadTrace(tryAll + "\"targets\": [{\"rule\": \"api\", \"key\": \"u1\", \"weight\": 1}]}",
                "targets[0].weight: unknown field; a target has rule (or limit) and key");
        assertBadTrace(tryAll + "\"targets\": [{\"rule\": \"api\", \"key\": \"u1\"}, {\"rule\": \"web\", \"key\": \"u1\"}]}",
                "targets[1].rule: unknown rule \"web\" in " + rules + "; it defines api");
        assertBadTrace(tryAll + "\"rule\": \"api\", \"keys\": [\"u1\", \"u1\"]}",
                "keys: targets must be distinct; rule 'api' on key 'u1' appears twice");
        assertBadTrace(tryAll + "\"rule\": \"api\", \"keys\": [\"u1\", \"u2\"], \"permits\": 3}",
                "permits: permits must be in [1, 2] for rule 'api', was 3");
        assertBadTrace(tryAll + "\"rule\": \"api\", \"keys\": [\"u1\"], \"permits\": 0}",
                "permits: expected an integer of at least 1; was 0");
    }

    @Test
    void timeGoingBackwards() throws IOException {
        Path trace = write("trace.jsonl", GOOD.replace("1000", "2000.5") + GOOD);
        ReplayRun run = replay("--rules", rules, "--trace", trace);
        assertThat(run.exitCode()).isEqualTo(1);
        assertThat(run.err()).contains(trace + ":2: t_ms: lines must be in non-decreasing time; 1000 is before"
                + " 2000.5 on line 1");
    }

    @Test
    void badRulesFileNamesFileLineAndField() throws IOException {
        Path bad = write("bad.yaml", "limits:\n  per_sec: {algorithm: fixed_window, limit: 2, window: 1000}\n");
        ReplayRun run = replay("--rules", bad, "--trace", write("trace.jsonl", GOOD));
        assertThat(run.exitCode()).isEqualTo(1);
        assertThat(run.err()).startsWith("sluice replay: " + bad + ":2:48: limits.per_sec.window: expected a"
                + " duration");
    }

    @Test
    void badCompareRulesFileIsReportedToo() throws IOException {
        Path bad = write("bad.json", "{\"limits\": {\"x\": {\"algorithm\": \"gcra\"}}}");
        ReplayRun run = replay("--rules", rules, "--trace", write("trace.jsonl", GOOD), "--summary", "--compare", bad);
        assertThat(run.exitCode()).isEqualTo(1);
        assertThat(run.err()).startsWith("sluice replay: " + bad + ":1:13: limits.x: missing parameter limit");
    }

    @Test
    void aFailedReplayLeavesNoOutputFile() throws IOException {
        Path out = dir.resolve("decisions.jsonl");
        Path trace = write("trace.jsonl", GOOD + GOOD + "{\"t_ms\": 1}\n");

        ReplayRun run = replay("--rules", rules, "--trace", trace, "--out", out, "--chart", dir.resolve("c.png"));

        assertThat(run.exitCode()).isEqualTo(1);
        assertThat(dir.toFile().list()).containsExactlyInAnyOrder("rules.yaml", "trace.jsonl");
    }

    @Test
    void anExistingOutputIsKeptWhenTheReplayFails() throws IOException {
        Path out = write("decisions.jsonl", "previous run\n");

        replay("--rules", rules, "--trace", write("trace.jsonl", "{\"t_ms\": 1}\n"), "--out", out);

        assertThat(Files.readString(out)).isEqualTo("previous run\n");
    }

    // --- usage: exit code 2 ---

    @Test
    void missingRequiredOptions() {
        assertUsage(replay("--trace", "t.jsonl"), "--rules is required");
        assertUsage(replay("--rules", "r.yaml"), "--trace is required");
        assertUsage(replay("--rules", "r.yaml", "--trace"), "--trace needs a value");
    }

    @Test
    void unknownOptionsAndMisplacedOnes() {
        assertUsage(replay("--rules", "r.yaml", "--trace", "t.jsonl", "--fast"), "unknown option '--fast'");
        assertUsage(replay("--rules", "r.yaml", "--trace", "t.jsonl", "extra"), "unexpected argument 'extra'");
        assertUsage(replay("--rules", "r.yaml", "--trace", "t.jsonl", "--key-class", "x"),
                "--key-class only applies with --summary");
        assertUsage(replay("--rules", "r.yaml", "--trace", "t.jsonl", "--slice", "1s"),
                "--slice and --chart-size only apply with --chart");
        assertUsage(replay("--rules", "r.yaml", "--trace", "t.jsonl", "--compare", "b.yaml"),
                "--compare shows in --summary and --chart; give at least one of them");
        assertUsage(replay("--rules", "r.yaml", "--trace", "t.jsonl", "--summary", "--key-class", "("),
                "--key-class: expected a regular expression; Unclosed group in \"(\"");
        assertUsage(replay("--rules", "r.yaml", "--trace", "t.jsonl", "--chart", "c.png", "--chart-size", "big"),
                "--chart-size: expected WIDTHxHEIGHT in pixels, e.g. 1200x800; was \"big\"");
        assertUsage(replay("--rules", "r.yaml", "--trace", "t.jsonl", "--chart", "c.png", "--slice", "100us"),
                "--slice: expected at least 1ms; was \"100us\"");
        assertUsage(replay("--rules", "r.yaml", "--trace", "t.jsonl", "--chart", "c.png", "--slice", "5"),
                "--slice: expected a duration: a number and a unit");
        assertUsage(replay("--rules", "r.yaml", "--rules", "s.yaml", "--trace", "t.jsonl"), "--rules given twice");
        assertUsage(replay("--trace", "t.jsonl", "--fast"), "unknown option '--fast'");
    }

    @Test
    void filesThatDoNotExist() throws IOException {
        assertUsage(replay("--rules", dir.resolve("none.yaml"), "--trace", write("t.jsonl", GOOD)),
                "cannot read rules file " + dir.resolve("none.yaml") + ": no such file");
        assertUsage(replay("--rules", rules, "--trace", dir.resolve("none.jsonl")),
                "cannot read trace " + dir.resolve("none.jsonl") + ": no such file");
    }

    @Test
    void outputInADirectoryThatDoesNotExist() throws IOException {
        Path trace = write("t.jsonl", GOOD);
        Path missing = dir.resolve("missing");
        assertUsage(replay("--rules", rules, "--trace", trace, "--out", missing.resolve("d.jsonl")),
                "cannot write " + missing.resolve("d.jsonl") + ": no such directory " + missing);
        assertUsage(replay("--rules", rules, "--trace", trace, "--chart", missing.resolve("c.png")),
                "cannot write " + missing.resolve("c.png") + ": no such directory " + missing);
    }

    @Test
    void unknownOrMalformedStore() throws IOException {
        Path trace = write("t.jsonl", GOOD);
        assertUsage(replay("--rules", rules, "--trace", trace, "--store", "disk"),
                "--store must be memory or a redis:// URI, was 'disk'");
        assertUsage(replay("--rules", rules, "--trace", trace, "--store",
                "redis://:secret@127.0.0.1:6379,,127.0.0.1:6380"),
                "--store redis://***@127.0.0.1:6379,,127.0.0.1:6380: uri must not hold an empty element");
    }

    @Test
    void unreachableRedisIsAnUnavailableStore() throws IOException {
        // Port 1 on loopback: nothing listens there, so the connection is refused at once.
        ReplayRun run = replay("--rules", rules, "--trace", write("t.jsonl", GOOD), "--store",
                "redis://:secret@127.0.0.1:1");
        assertThat(run.exitCode()).as(run.err()).isEqualTo(ExitStatus.STORE_UNAVAILABLE).isEqualTo(3);
        assertThat(run.err()).startsWith("sluice replay: cannot connect to Redis at redis://127.0.0.1:1")
                .doesNotContain("secret");
        assertThat(run.out()).isEmpty();
    }

    @Test
    void helpIsNotAnError() {
        ReplayRun run = replay("--help");
        assertThat(run.exitCode()).isZero();
        assertThat(run.out()).startsWith("Usage: sluice replay [-h] --rules=FILE --trace=FILE");
    }

    private static void assertUsage(ReplayRun run, String message) {
        assertThat(run.exitCode()).as(run.err()).isEqualTo(2);
        assertThat(run.err()).startsWith("sluice replay: " + message);
        assertThat(run.out()).isEmpty();
    }
}
