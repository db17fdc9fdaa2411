package io.sluice.bench.server;

import io.sluice.bench.BenchContext;
import io.sluice.bench.Measurement;
import io.sluice.bench.Profile;
import io.sluice.bench.redis.RedisLimits;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The eviction flood (issue 17): what a client that sends a new key with every request does to everyone else.
 * One server on the in-memory store bounded at {@link #MAX_KEYS} keys; a bystander (wrk, {@link #BYSTANDER}
 * connections over 1,000 keys of its own) is measured alone, then again while a flood (wrk,
 * {@link #FLOOD_CONNECTIONS} connections, a key never seen in every request) pushes the store past its bound so
 * that most of the flood's requests evict. The rows: the bystander's latency alone and under the flood, the
 * keys the flood created, and the server's resident memory before and after (the heap is the launcher's, so
 * the RSS must stay flat however many keys go past the bound).
 */
final class EvictionFlood {
    /**
     * Small enough that the flood's warm-up passes it on a loaded two-core machine (about 10,000 new keys per
     * second), large enough that a whole-table pass costs tens of milliseconds (at 50,000 it was lost in the
     * noise of such a machine).
     */
    static final int MAX_KEYS = 200_000;
    private static final int BYSTANDER = 4;
    private static final int BYSTANDER_KEYS = 1_000;
    private static final int FLOOD_CONNECTIONS = 32;
    /** Every flood request names a key never seen: wrk cycles through this many, far more than it sends. */
    private static final int FLOOD_KEYS = 2_000_000_000;

    private EvictionFlood() {}

    static List<Measurement> run(BenchContext context, Wrk wrk, Path dir, Path rules) throws Exception {
        Profile profile = context.profile();
        int seconds = floodSeconds(profile);
        List<Measurement> rows = new ArrayList<>();
        ServeProcess server;
        try {
            server = ServeProcess.start(dir, "flood", rules, "memory?max_keys=" + MAX_KEYS);
        } catch (IllegalStateException e) {
            return List.of(row("bystander_alone").note("could not start: " + e.getMessage()).build());
        }
        try (server) {
            String url = server.baseUrl();
            context.progress().say("  eviction flood on %s (max_keys %,d, %d s per phase)", url, MAX_KEYS, seconds);
            // Warm-up: the server's paths as the other server rows warm them, then the flood's (insertion, then
            // eviction once past the bound).
            ServerSuite.warmUp(context, wrk, server, FLOOD_CONNECTIONS);
            // Flood until the store is past its bound, so that the measured phase evicts throughout; a machine
            // too slow to get there within twice the server's warm-up budget (full: 120 s) says so in the note.
            int fillSteps = Math.max(1, 2 * ServerSuite.serverWarmupSeconds(profile) / seconds);
            long filled = 0;
            for (int step = 0; step < fillSteps && filled <= MAX_KEYS; step++) {
                filled += wrk.run(url, FLOOD_CONNECTIONS, seconds, "bench", FLOOD_KEYS, "fill" + step).requests();
            }
            Wrk.Result alone = wrk.run(url, BYSTANDER, seconds, "bench", BYSTANDER_KEYS, "bystander-alone");
            rows.add(bystanderRow(row("bystander_alone"), alone).build());
            double rssBefore = server.rssMb();
            CompletableFuture<Wrk.Result> flood = CompletableFuture.supplyAsync(() -> {
                try {
                    return wrk.run(url, FLOOD_CONNECTIONS, seconds, "bench", FLOOD_KEYS, "flood");
                } catch (Exception e) {
                    throw new CompletionException(e);
                }
            });
            Wrk.Result under = wrk.run(url, BYSTANDER, seconds, "bench", BYSTANDER_KEYS, "bystander-flooded");
            Wrk.Result flooder = flood.join();
            double rssAfter = server.rssMb();
            rows.add(bystanderRow(row("bystander_under_flood"), under)
                    .rssMb(rssBefore, rssAfter)
                    .note(String.format("the flood: %,d new keys at %,.0f/s, p99 %,.0f µs, after %,d in its warm-up; "
                            + "the store holds at most %,d%s", flooder.requests(), flooder.perSecond(), flooder.p99Us(),
                            filled, MAX_KEYS, filled > MAX_KEYS ? "" : " (not reached in the warm-up: the phase "
                                    + "measured insertion more than eviction)"))
                    .build());
            context.progress().say("  eviction flood: bystander p99 %,.0f µs alone, %,.0f µs under %,d new keys; "
                    + "RSS %,.0f -> %,.0f MiB", alone.p99Us(), under.p99Us(), flooder.requests(), rssBefore, rssAfter);
        } catch (IllegalStateException | CompletionException e) {
            rows.add(row("bystander_under_flood").note("failed: " + e.getMessage()).build());
        }
        return rows;
    }

    private static Measurement.Builder bystanderRow(Measurement.Builder row, Wrk.Result result) {
        return row.decisionsPerS(result.perSecond()).latencyUs(result.p50Us(), result.p99Us())
                .admittedFraction(result.requests() == 0 ? Double.NaN : (double) result.admitted() / result.requests())
                .runs(1);
    }

    private static Measurement.Builder row(String mode) {
        return Measurement.of("server", "sluice").variant("memory/eviction_flood").mode(mode)
                .algorithm("token_bucket")
                .config(RedisLimits.LOAD.describe("token_bucket") + "; memory?max_keys=" + MAX_KEYS)
                .keys(BYSTANDER_KEYS).threads(1).inFlight(BYSTANDER);
    }

    /**
     * Each phase: five times a server row's run (full: 10 s, which pushes the flood well past the bound; quick:
     * 5 s), and no longer than a new server's warm-up budget, so that a test's tiny profile (a 2 s budget) spends
     * 2 s per phase rather than 5 s on a row it only checks for shape.
     */
    static int floodSeconds(Profile profile) {
        return Math.min(5 * ServerSuite.runSeconds(profile), ServerSuite.serverWarmupSeconds(profile));
    }
}
