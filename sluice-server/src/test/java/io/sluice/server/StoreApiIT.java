package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.FixedWindow;
import io.sluice.Rule;
import io.sluice.SlidingLog;
import io.sluice.rules.RuleText;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The remote store protocol ({@code /v1/store/rules}, {@code /v1/store/call}) on an in-process server: rules by
 * definition and fingerprint, the server's own rules shared with {@code /v1/check}, mismatches and bad input
 * refused with the field or rule named, and the token required.
 */
class StoreApiIT {

    private static final String RULES = String.join("\n",
            "limits:",
            "  login_attempts: {algorithm: sliding_log, limit: 3, window: 1m}",
            "rules:",
            "  login: {limits: [login_attempts]}",
            "");
    private static final Rule LOGIN = Rule.of("login", SlidingLog.of(3, Duration.ofMinutes(1)).named("login_attempts"));

    @TempDir
    Path dir;

    private static String call(Rule rule, String key, String op, long permits) {
        return "{\"rule\":\"" + rule.name() + "\",\"fingerprint\":\"" + RuleText.fingerprint(rule) + "\",\"key\":\""
                + key + "\",\"op\":\"" + op + "\",\"permits\":" + permits + "}";
    }

    @Test
    void aRegisteredRuleIsDecidedByFingerprintAndAnUnknownOneAsksForRegistration() {
        Rule own = Rule.of("client-own", FixedWindow.of(2, Duration.ofMinutes(1)));
        try (TestServer t = TestServer.start(dir, List.of(RULES), b -> { })) {
            HttpResponse<String> unknown = t.post("/v1/store/call", call(own, "k", "try", 1));
            assertThat(unknown.statusCode()).isEqualTo(412);
            assertThat(unknown.body()).contains("\"code\":\"unknown_rule\"").contains("client-own");

            HttpResponse<String> registered = t.post("/v1/store/rules", RuleText.of(own));
            assertThat(registered.statusCode()).isEqualTo(200);
            assertThat(registered.body()).isEqualTo("{\"fingerprint\":\"" + RuleText.fingerprint(own) + "\"}");

            HttpResponse<String> first = t.post("/v1/store/call", call(own, "k", "try", 1));
            assertThat(first.statusCode()).isEqualTo(200);
            assertThat(first.body()).isEqualTo("{\"allowed\":true,\"granted\":1,\"remaining\":1,\"retry_after_us\":0,"
                    + "\"reset_after_us\":" + (60_000_000 - t.clock.nowMicros() % 60_000_000)
                    + ",\"wait_us\":0,\"limit\":\"fixed_window\",\"lease\":-1,\"source\":\"store\"}");
            assertThat(t.post("/v1/store/call", call(own, "k", "try", 1)).body()).contains("\"remaining\":0");
            assertThat(t.post("/v1/store/call", call(own, "k", "peek", 1)).body()).contains("\"allowed\":false");
            assertThat(t.post("/v1/store/call", "{\"rule\":\"client-own\",\"fingerprint\":\""
                    + RuleText.fingerprint(own) + "\",\"key\":\"k\",\"op\":\"reset\"}").body())
                    .isEqualTo("{\"reset\":true}");
            assertThat(t.post("/v1/store/call", call(own, "k", "try", 2)).body()).contains("\"allowed\":true");
        }
    }

    @Test
    void theServersRuleIsSharedWithTheCheckApiAndADifferentDefinitionIsRefused() {
        try (TestServer t = TestServer.start(dir, List.of(RULES), b -> { })) {
            assertThat(t.post("/v1/store/rules", RuleText.of(LOGIN)).statusCode()).isEqualTo(200);
            assertThat(t.post("/v1/store/call", call(LOGIN, "user:1", "try", 2)).body()).contains("\"remaining\":1");
            // The same state as the server's own API sees.
            assertThat(t.post("/v1/check", "{\"rule\": \"login\", \"key\": \"user:1\"}").body())
                    .contains("\"remaining\":0");

            Rule other = Rule.of("login", SlidingLog.of(30, Duration.ofMinutes(1)).named("login_attempts"));
            HttpResponse<String> refused = t.post("/v1/store/rules", RuleText.of(other));
            assertThat(refused.statusCode()).isEqualTo(409);
            assertThat(refused.body()).contains("\"code\":\"rule_mismatch\"")
                    .contains("rule 'login' differs from the server's rule files");
        }
    }

    @Test
    void badInputIsRefusedNamingTheField() {
        Rule own = Rule.of("client-own", FixedWindow.of(2, Duration.ofMinutes(1)));
        try (TestServer t = TestServer.start(dir, List.of(RULES), b -> { })) {
            t.post("/v1/store/rules", RuleText.of(own));
            assertThat(t.post("/v1/store/call", call(own, "k", "try", 3)).body()).contains("permits")
                    .contains("[1, 2]");
            assertThat(t.post("/v1/store/call", call(own, "k", "take", 1)).body()).contains("op");
            assertThat(t.post("/v1/store/call", call(own, "k", "try", 1).replace("}", ",\"extra\":1}")).body())
                    .contains("extra: unknown field");
            HttpResponse<String> clock = t.post("/v1/store/call", call(own, "k", "try", 1)
                    .replace("}", ",\"now_us\":5}"));
            assertThat(clock.statusCode()).isEqualTo(400);
            assertThat(clock.body()).contains("now_us").contains("--clock client");
            assertThat(t.post("/v1/store/rules", "{\"limits\": {}}").statusCode()).isEqualTo(400);
            assertThat(t.post("/v1/store/rules", RuleText.of(Rule.of("rls:x", FixedWindow.of(1,
                    Duration.ofSeconds(1))))).body()).contains("rls:");
            // Nothing was charged by the refused calls.
            assertThat(t.post("/v1/store/call", call(own, "k", "try", 2)).body()).contains("\"allowed\":true");
        }
    }

    @Test
    void chargeAndSettleKeepTheTicketInTheServersStoreAndRefuseBadFields() {
        Rule own = Rule.of("client-tokens", FixedWindow.of(100, Duration.ofMinutes(1)));
        String head = "{\"rule\":\"client-tokens\",\"fingerprint\":\"" + RuleText.fingerprint(own)
                + "\",\"key\":\"k\",";
        String charge = head + "\"op\":\"charge\",\"estimate\":60,\"ticket\":\"t-1\",\"lifetime_us\":60000000}";
        try (TestServer t = TestServer.start(dir, List.of(RULES), b -> { })) {
            t.post("/v1/store/rules", RuleText.of(own));
            assertThat(t.post("/v1/store/call", charge).body()).contains("\"allowed\":true").contains("\"remaining\":40");
            HttpResponse<String> again = t.post("/v1/store/call", charge);
            assertThat(again.statusCode()).isEqualTo(400);
            assertThat(again.body()).isEqualTo("{\"error\":\"ticket id 't-1' is already open for key 'k' of rule"
                    + " 'client-tokens'; a ticket id must be unique while its ticket lives\",\"code\":\"invalid\"}");
            assertThat(t.post("/v1/store/call", head + "\"op\":\"settle\",\"ticket\":\"t-1\",\"actual\":15}").body())
                    .isEqualTo("{\"settled\":true,\"estimate\":60,\"actual\":15}");
            assertThat(t.post("/v1/store/call", head + "\"op\":\"settle\",\"ticket\":\"t-1\",\"actual\":15}").body())
                    .isEqualTo("{\"settled\":false,\"estimate\":0,\"actual\":0}");
            assertThat(t.post("/v1/store/call", call(own, "k", "peek", 0)).body()).contains("\"remaining\":85");

            assertThat(t.post("/v1/store/call", charge.replace("60,", "101,")).body())
                    .contains("estimate: expected an integer in [1, 100] for rule 'client-tokens'; was 101");
            assertThat(t.post("/v1/store/call", charge.replace("t-1", "t 1")).body()).contains("ticket: ticket id must be");
            assertThat(t.post("/v1/store/call", charge.replace("60000000", "0")).body())
                    .contains("lifetime_us: expected microseconds in [1000, 86400000000]; was 0");
            assertThat(t.post("/v1/store/call", head + "\"op\":\"settle\",\"ticket\":\"t-1\",\"actual\":-1}")
                    .body()).contains("actual: actual must be in [0, 1000000000000], was -1");
            assertThat(t.post("/v1/store/call", head + "\"op\":\"settle\",\"ticket\":\"t-1\",\"actual\":1,"
                    + "\"estimate\":3}").body()).contains("estimate: not used by op settle");
            assertThat(t.post("/v1/store/call", call(own, "k", "try", 1).replace("}", ",\"ticket\":\"x\"}")).body())
                    .contains("ticket: not used by op try");

            // A rule whose limit cannot settle: 422, nothing charged.
            Rule bucket = Rule.of("client-bucket", io.sluice.LeakyBucket.of(10, Duration.ofSeconds(1)));
            t.post("/v1/store/rules", RuleText.of(bucket));
            String before = t.post("/v1/store/call", call(bucket, "k", "peek", 0)).body();
            HttpResponse<String> refused = t.post("/v1/store/call", "{\"rule\":\"client-bucket\",\"fingerprint\":\""
                    + RuleText.fingerprint(bucket) + "\",\"key\":\"k\",\"op\":\"charge\",\"estimate\":1,"
                    + "\"ticket\":\"t-2\",\"lifetime_us\":60000000}");
            assertThat(refused.statusCode()).isEqualTo(422);
            assertThat(refused.body()).contains("which cannot settle a ticket").contains("\"code\":\"cannot_settle\"");
            assertThat(t.post("/v1/store/call", call(bucket, "k", "peek", 0)).body()).isEqualTo(before);
        }
    }

    @Test
    void theClockOptionTakesServerOrClient() throws Exception {
        assertThat(ServeCommand.configure(new String[] {"--clock", "client"}, name -> null)).isNotNull();
        assertThat(ServeCommand.configure(new String[] {"--clock=server"}, name -> null)).isNotNull();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> ServeCommand.configure(
                        new String[] {"--clock", "sometimes"}, name -> null))
                .isInstanceOf(ServeCommand.UsageException.class)
                .hasMessage("--clock must be server or client, was 'sometimes'");
    }

    @Test
    void theTokenIsRequired() {
        try (TestServer t = TestServer.start(dir, List.of(RULES), b -> b.token("s3cret"))) {
            assertThat(t.post("/v1/store/rules", RuleText.of(LOGIN)).statusCode()).isEqualTo(401);
            assertThat(t.post("/v1/store/call", call(LOGIN, "k", "try", 1)).statusCode()).isEqualTo(401);
        }
    }
}
