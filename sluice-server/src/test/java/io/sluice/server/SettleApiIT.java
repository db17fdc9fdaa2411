package io.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Store;
import io.sluice.redis.RedisStore;
import io.sluice.testkit.ManualClock;
import io.sluice.testkit.redis.RedisServer;
import io.sluice.testkit.redis.SharedRedis;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code POST /v1/charge} and {@code POST /v1/settle} over a real socket with the JDK's HTTP client, on the
 * in-memory store and on a real redis-server (exact mode, client time on the test's clock), with the same
 * expectations: the estimate counts until the settlement refunds the unused part or charges the rest, a ticket
 * settles once and expires at its estimate, and what cannot settle or is malformed is refused before anything is
 * charged.
 */
@ExtendWith(SharedRedis.class)
class SettleApiIT {

    static final String RULES = String.join("\n",
            "limits:",
            "  tokens: {algorithm: fixed_window, limit: 100, window: 1m}",
            "  slots: {algorithm: concurrency, max_concurrent: 1, lease_ttl: 1m}",
            "  log: {algorithm: sliding_log, limit: 10, window: 1m}",
            "rules:",
            "  llm: {limits: [tokens]}",
            "  slots: {limits: [slots]}",
            "  logged: {limits: [log]}",
            "");
    private static final Pattern TICKET = Pattern.compile("\"ticket\":\"([A-Za-z0-9_-]+)\"");

    @TempDir
    Path dir;
    TestServer t;
    ManualClock clock;
    Store redis;
    String prefix;

    /** A server on the memory store, or on a fresh prefix of the shared redis-server; both on {@link #clock}. */
    private void start(String store) {
        if (store.equals("memory")) {
            t = TestServer.start(dir, RULES);
            clock = t.clock;
            return;
        }
        clock = new ManualClock();
        prefix = "settle-api-" + UUID.randomUUID().toString().substring(0, 8);
        redis = RedisStore.builder().uri(RedisServer.shared().uri()).clock(clock).timeout(Duration.ofSeconds(30))
                .prefix(prefix).build();
        t = TestServer.start(dir, List.of(RULES), b -> b.store(redis));
    }

    @AfterEach
    void stop() {
        if (t != null) {
            t.close();
        }
        if (redis != null) {
            redis.close();
        }
    }

    private HttpResponse<String> charge(String body) {
        return t.post("/v1/charge", body);
    }

    private HttpResponse<String> settle(String ticket, long actual) {
        return t.post("/v1/settle", "{\"ticket\": \"" + ticket + "\", \"actual\": " + actual + "}");
    }

    /** A try of {@code permits} of rule llm, or a peek when 0. */
    private HttpResponse<String> check(String key, long permits) {
        return t.post("/v1/check", "{\"rule\": \"llm\", \"key\": \"" + key + "\", \"permits\": " + permits
                + (permits == 0 ? ", \"op\": \"peek\"}" : "}"));
    }

    private static String ticketOf(HttpResponse<String> r) {
        Matcher m = TICKET.matcher(r.body());
        assertThat(m.find()).as(r.body()).isTrue();
        return m.group(1);
    }

    @ParameterizedTest
    @ValueSource(strings = {"memory", "redis"})
    void aSettlementRefundsTheUnusedPartOnce(String store) {
        start(store);
        HttpResponse<String> charged = charge("{\"rule\": \"llm\", \"key\": \"tenant:acme\", \"estimate\": 60}");
        assertThat(charged.statusCode()).isEqualTo(200);
        assertThat(charged.body()).startsWith("{\"allowed\":true,\"granted\":60,\"remaining\":40,\"retry_after_ms\":0,"
                + "\"reset_after_ms\":60000,\"wait_ms\":0,\"limit\":\"tokens\",\"ticket\":\"");
        assertThat(charged.headers().firstValue("RateLimit-Policy")).hasValue("\"tokens\";q=100;w=60");
        assertThat(charged.headers().firstValue("RateLimit")).hasValue("\"tokens\";r=40;t=60");
        String ticket = ticketOf(charged);
        String decoded = new String(Base64.getUrlDecoder().decode(ticket), StandardCharsets.UTF_8);
        assertThat(decoded).matches("\\{\"rule\":\"llm\",\"key\":\"tenant:acme\",\"estimate\":60,\"id\":\"[0-9a-f]{32}\"}");

        assertThat(check("tenant:acme", 50).statusCode()).as("60 + 50 > 100 while the estimate counts").isEqualTo(429);
        HttpResponse<String> settled = settle(ticket, 20);
        assertThat(settled.statusCode()).isEqualTo(200);
        assertThat(settled.body()).isEqualTo("{\"settled\":true,\"estimate\":60,\"actual\":20,\"refunded\":40,\"extra\":0}");
        assertThat(check("tenant:acme", 50).body()).contains("\"remaining\":30");

        HttpResponse<String> again = settle(ticket, 0);
        assertThat(again.statusCode()).isEqualTo(200);
        assertThat(again.body()).isEqualTo("{\"settled\":false,\"estimate\":0,\"actual\":0,\"refunded\":0,\"extra\":0}");
        assertThat(check("tenant:acme", 0).body()).as("the second settlement refunded nothing")
                .contains("\"remaining\":30");

        String metrics = t.get("/metrics").body();
        assertThat(metrics).contains("sluice_settlements_total{api=\"http\",outcome=\"settled\",rule=\"llm\"} 1.0");
        assertThat(metrics).contains("sluice_settlements_total{api=\"http\",outcome=\"not_settled\",rule=\"llm\"} 1.0");
        assertThat(metrics).contains("sluice_decisions_total{api=\"http\",outcome=\"allowed\",rule=\"llm\"} 2.0");
    }

    @ParameterizedTest
    @ValueSource(strings = {"memory", "redis"})
    void anExtraChargePutsTheKeyInDebtAndARejectedChargeHasNoTicket(String store) {
        start(store);
        String ticket = ticketOf(charge("{\"rule\": \"llm\", \"key\": \"k\", \"estimate\": 80}"));
        assertThat(settle(ticket, 130).body()).isEqualTo("{\"settled\":true,\"estimate\":80,\"actual\":130,"
                + "\"refunded\":0,\"extra\":50}");
        HttpResponse<String> rejected = charge("{\"rule\": \"llm\", \"key\": \"k\", \"estimate\": 1}");
        assertThat(rejected.statusCode()).isEqualTo(429);
        assertThat(rejected.body()).isEqualTo("{\"allowed\":false,\"granted\":0,\"remaining\":0,\"retry_after_ms\":60000,"
                + "\"reset_after_ms\":60000,\"wait_ms\":0,\"limit\":\"tokens\"}");
        assertThat(rejected.headers().firstValue("Retry-After")).hasValue("60");

        clock.advance(Duration.ofMinutes(1));
        assertThat(check("k", 100).statusCode()).as("the next window starts afresh").isEqualTo(200);
    }

    @ParameterizedTest
    @ValueSource(strings = {"memory", "redis"})
    void anUnsettledTicketExpiresAtItsEstimate(String store) {
        start(store);
        String ticket = ticketOf(charge("{\"rule\": \"llm\", \"key\": \"k\", \"estimate\": 30, \"lifetime_ms\": 1000}"));
        clock.advance(Duration.ofSeconds(1));
        assertThat(settle(ticket, 0).body()).startsWith("{\"settled\":false,");
        assertThat(check("k", 0).body()).contains("\"remaining\":70");
    }

    @ParameterizedTest
    @ValueSource(strings = {"memory", "redis"})
    void domainsAndLimitsAddressTheirOwnState(String store) {
        start(store);
        String inDomain = ticketOf(charge("{\"rule\": \"llm\", \"key\": \"k\", \"domain\": \"acme\", \"estimate\": 90}"));
        String byLimit = ticketOf(charge("{\"limit\": \"tokens\", \"key\": \"k\", \"estimate\": 70}"));
        assertThat(check("k", 100).statusCode()).as("neither charge counts for the key without a domain").isEqualTo(200);
        assertThat(new String(Base64.getUrlDecoder().decode(inDomain), StandardCharsets.UTF_8))
                .startsWith("{\"rule\":\"llm\",\"domain\":\"acme\",\"key\":\"k\",\"estimate\":90,");
        assertThat(settle(inDomain, 10).body()).contains("\"refunded\":80");
        assertThat(settle(byLimit, 0).body()).contains("\"refunded\":70");
        assertThat(t.post("/v1/check", "{\"rule\": \"llm\", \"key\": \"k\", \"domain\": \"acme\", \"permits\": 90}")
                .statusCode()).isEqualTo(200);
    }

    @ParameterizedTest
    @ValueSource(strings = {"memory", "redis"})
    void anEditedTicketSettlesNothing(String store) {
        start(store);
        String ticket = ticketOf(charge("{\"rule\": \"llm\", \"key\": \"victim\", \"estimate\": 50}"));
        String json = new String(Base64.getUrlDecoder().decode(ticket), StandardCharsets.UTF_8);
        String otherId = json.replaceAll("\"id\":\"[0-9a-f]{32}\"", "\"id\":\"" + "0".repeat(32) + "\"");
        String forged = Base64.getUrlEncoder().withoutPadding().encodeToString(otherId.getBytes(StandardCharsets.UTF_8));
        assertThat(settle(forged, 0).body()).startsWith("{\"settled\":false,");
        assertThat(check("victim", 0).body()).contains("\"remaining\":50");
    }

    @ParameterizedTest
    @ValueSource(strings = {"memory", "redis"})
    void aRuleThatCannotSettleIs422BeforeAnythingIsCharged(String store) {
        start(store);
        HttpResponse<String> refused = charge("{\"rule\": \"slots\", \"key\": \"k\", \"estimate\": 1}");
        assertThat(refused.statusCode()).isEqualTo(422);
        assertThat(refused.body()).isEqualTo("{\"error\":\"limit 'slots' of rule 'slots' is concurrency, which cannot"
                + " settle a ticket: it counts permits in flight, not a rate: return them with release(lease)\"}");
        // Nothing was charged: the one slot is still free.
        assertThat(t.post("/v1/check", "{\"rule\": \"slots\", \"key\": \"k\"}").statusCode()).isEqualTo(200);
        // sliding_log settles in both stores.
        assertThat(charge("{\"rule\": \"logged\", \"key\": \"k\", \"estimate\": 4}").statusCode()).isEqualTo(200);
    }

    /**
     * What a charge and a settlement cost Redis, counted (not timed): one script call each, and one small string
     * key per open ticket, gone once settled.
     */
    @org.junit.jupiter.api.Test
    void onRedisAChargeAndASettlementAreOneScriptCallEachAndTheTicketOneSmallKey() {
        start("redis");
        RedisServer server = RedisServer.shared();
        // The store connects (and loads its script) on its first call: a check before counting.
        assertThat(check("warm", 1).statusCode()).isEqualTo(200);
        server.call("CONFIG", "RESETSTAT");
        String ticket = ticketOf(charge("{\"rule\": \"llm\", \"key\": \"tenant:acme\", \"estimate\": 60}"));
        assertThat(scriptCalls(server)).as("script calls for one charge").isEqualTo(1);
        List<?> keys = (List<?>) server.call("KEYS", prefix + ":*:t:*");
        assertThat(keys).hasSize(1);
        long bytes = ((Number) server.call("MEMORY", "USAGE", String.valueOf(keys.get(0)))).longValue();
        assertThat(bytes).as("MEMORY USAGE of the open ticket").isBetween(1L, 256L);
        assertThat(settle(ticket, 20).body()).startsWith("{\"settled\":true,");
        assertThat(scriptCalls(server)).as("script calls for a charge and its settlement").isEqualTo(2);
        assertThat((List<?>) server.call("KEYS", prefix + ":*:t:*")).as("the settled ticket is gone").isEmpty();
    }

    /** FCALL and EVALSHA calls since the last RESETSTAT (INFO also counts the commands inside them). */
    private static long scriptCalls(RedisServer server) {
        long calls = 0;
        for (String line : String.valueOf(server.call("INFO", "commandstats")).split("\r?\n")) {
            if (line.startsWith("cmdstat_eval") || line.startsWith("cmdstat_fcall")) {
                int at = line.indexOf("calls=");
                calls += Long.parseLong(line.substring(at + 6, line.indexOf(',', at)));
            }
        }
        return calls;
    }

    @ParameterizedTest
    @ValueSource(strings = {"memory"})
    void badInputIs400NamingTheField(String store) {
        start(store);
        assertError(charge("{\"rule\": \"llm\", \"key\": \"k\"}"), "estimate: required: the permits to charge now, e.g."
                + " a prompt's tokens plus its max_tokens");
        assertError(charge("{\"rule\": \"llm\", \"key\": \"k\", \"estimate\": 101}"), "estimate: must be in [1, 100]"
                + " for rule 'llm' (no more can ever be granted at once), was 101");
        assertError(charge("{\"rule\": \"llm\", \"key\": \"k\", \"estimate\": 0}"), "estimate: expected an integer in"
                + " [1, 1000000000000]; was 0");
        assertError(charge("{\"rule\": \"llm\", \"key\": \"k\", \"estimate\": 1, \"lifetime_ms\": 0}"), "lifetime_ms:"
                + " expected an integer in [1, 86400000]; was 0");
        assertError(charge("{\"rule\": \"llm\", \"key\": \"k\", \"estimate\": 1, \"permits\": 1}"), "permits: unknown"
                + " field; a charge has rule (or limit), key, estimate, lifetime_ms and domain");
        assertError(charge("{\"rule\": \"nope\", \"key\": \"k\", \"estimate\": 1}"), "rule: unknown rule \"nope\"; the"
                + " rules are llm, slots, logged");
        assertError(charge("{\"key\": \"k\", \"estimate\": 1}"), "give exactly one of \"rule\" and \"limit\"");
        assertError(settle("bm90IGEgdGlja2V0", 1), "ticket: not a ticket of POST /v1/charge; send back the \"ticket\""
                + " of its answer unchanged");
        assertError(settle("%%%", 1), "ticket: not a ticket of POST /v1/charge; send back the \"ticket\" of its"
                + " answer unchanged");
        String ticket = ticketOf(charge("{\"rule\": \"llm\", \"key\": \"k\", \"estimate\": 10}"));
        assertError(settle(ticket, -1), "actual: expected an integer in [0, 1000000000000]; was -1");
        assertError(t.post("/v1/settle", "{\"ticket\": \"" + ticket + "\"}"), "actual: required: the permits actually"
                + " used, 0 or more");
        assertError(t.post("/v1/settle", "{\"actual\": 1}"), "ticket: required: the ticket POST /v1/charge answered");
        assertThat(check("k", 0).body()).as("only the valid charge counted").contains("\"remaining\":90");
    }

    private static void assertError(HttpResponse<String> r, String message) {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(400);
        assertThat(r.body()).isEqualTo("{\"error\":\"" + message.replace("\"", "\\\"") + "\"}");
    }
}
