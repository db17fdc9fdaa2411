package io.sluice.bench.attack;

import io.sluice.bench.BenchContext;
import io.sluice.bench.Measurement;
import io.sluice.bench.Profile;
import io.sluice.bench.Suite;
import io.sluice.bench.server.ServeProcess;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The attack suite (issue 17): one {@code sluice serve} on the in-memory store, bounded at {@code max_keys},
 * loopback only, and the probes of {@link #probes} in turn. For each, a {@link Bystander} runs alongside and
 * the server's RSS, threads and file descriptors are read before and after, so that a regression (a 500 where
 * a 400 was, a bystander stalled, descriptors or memory that are not given back) shows up as a number in the
 * row: {@code p50_us}/{@code p99_us} are the bystander's, {@code rss_*_mb} the server's, and the note holds the
 * probe's answers by outcome, what held, the threads and descriptors, and the bystander's own answers.
 */
public final class AttackSuite implements Suite {
    /** Between probes, so that connections a probe closed are gone from the next probe's "before". */
    private static final long SETTLE_MS = 1_000;

    @Override
    public String name() {
        return "attack";
    }

    /** The probes in the order of issue 17, sized for the profile: well under a minute quick, minutes in full. */
    static List<Probe> probes(boolean quick, int maxKeys) {
        return List.of(
                new InvalidUnicodeProbe(quick ? 20 : 500),
                new EvictionFloodProbe(maxKeys, quick ? 5 : 30),
                new IdleConnectionsProbe(quick ? 200 : 2_000, quick ? 5 : 30),
                new SlowlorisProbe(quick ? 50 : 500, quick ? 5 : 30),
                new MalformedGrpcProbe(quick ? 10 : 200));
    }

    /**
     * Small, so that the flood of this suite's plain Java client (a few hundred to a few thousand requests per
     * second on a loaded two-core machine) goes well past it; the server suite's eviction flood (wrk, 200,000
     * keys) measures the bound at scale.
     */
    static int maxKeys(boolean quick) {
        return quick ? 500 : 5_000;
    }

    @Override
    public List<Measurement> run(BenchContext context) throws Exception {
        boolean quick = context.profile() != Profile.FULL;
        int maxKeys = maxKeys(quick);
        String store = "memory?max_keys=" + maxKeys;
        Path dir = context.logDir().resolve("attack");
        Files.createDirectories(dir);
        Path rules = dir.resolve("rules.yaml");
        Files.writeString(rules, String.join("\n",
                "# sluice bench: the attack suite's rules",
                "limits:",
                "  per_key: {algorithm: token_bucket, capacity: 1000, refill_tokens: 1000, refill_period: 1s}",
                "  once: {algorithm: fixed_window, limit: 1, window: 1h, align: first_request}",
                "rules:",
                "  bench: {limits: [per_key]}",
                "  once: {limits: [once]}",
                ""), StandardCharsets.UTF_8);
        Path envoy = dir.resolve("envoy.yaml");
        Files.writeString(envoy, "domain: g\ndescriptors:\n  - key: k\n    rate_limit: {unit: hour,"
                + " requests_per_unit: 100}\n", StandardCharsets.UTF_8);
        List<Measurement> rows = new ArrayList<>();
        ServeProcess server;
        try {
            server = ServeProcess.start(dir, "attack", List.of(rules, envoy), store);
        } catch (IllegalStateException e) {
            return List.of(Measurement.of(name(), "sluice").variant("all").note("could not start: " + e.getMessage())
                    .build());
        }
        try (server) {
            URI base = URI.create(server.baseUrl());
            HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(Duration.ofSeconds(10)).build();
            Probe.Target target = new Probe.Target(server.baseUrl(), base.getHost(), base.getPort(), server.grpcPort(),
                    http);
            context.progress().say("  attack: sluice serve on %s, gRPC port %d, store %s", server.baseUrl(),
                    server.grpcPort(), store);
            warmUp(target);
            for (Probe probe : probes(quick, maxKeys)) {
                rows.add(measure(context, server, target, probe, store));
            }
        }
        return rows;
    }

    /** A few hundred ordinary requests, so that the first probe does not measure class loading. */
    private static void warmUp(Probe.Target target) throws InterruptedException {
        try (Bystander warm = new Bystander(target.baseUrl())) {
            Thread.sleep(2_000);
        }
    }

    private Measurement measure(BenchContext context, ServeProcess server, Probe.Target target, Probe probe,
            String store) throws Exception {
        Thread.sleep(SETTLE_MS);
        ProcessStats before = ProcessStats.of(server.pid());
        Measurement.Builder row = Measurement.of(name(), "sluice").variant(probe.name()).mode("probe")
                .config(probe.describe() + "; " + store).threads(1).inFlight(1);
        Probe.Outcome outcome;
        long started = System.nanoTime();
        Bystander bystander = new Bystander(target.baseUrl());
        // The peak during the probe: an idle flood's descriptors are given back once it closes its sockets.
        AtomicLong peakFds = new AtomicLong(before.fds());
        AtomicLong peakThreads = new AtomicLong(before.threads());
        ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor();
        sampler.scheduleAtFixedRate(() -> {
            ProcessStats now = ProcessStats.of(server.pid());
            peakFds.accumulateAndGet(now.fds(), Math::max);
            peakThreads.accumulateAndGet(now.threads(), Math::max);
        }, 0, 200, TimeUnit.MILLISECONDS);
        try {
            outcome = probe.run(target);
        } catch (Exception e) {
            context.progress().say("  attack %s failed: %s", probe.name(), e);
            return row.note("probe failed: " + e).build();
        } finally {
            bystander.close();
            sampler.shutdownNow();
            sampler.awaitTermination(5, TimeUnit.SECONDS);
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        Thread.sleep(SETTLE_MS);
        ProcessStats after = ProcessStats.of(server.pid());
        String note = String.format("answers: %s%s; threads %d -> %d (peak %d); fds %d -> %d (peak %d); "
                + "bystander: %s over %.1f s", outcome.answers(), outcome.finding() == null ? "" : "; "
                + outcome.finding(), before.threads(), after.threads(), peakThreads.get(), before.fds(), after.fds(),
                peakFds.get(), bystander.answers(), seconds);
        context.progress().say("  attack %s: bystander p50 %,.0f µs, p99 %,.0f µs; RSS %,.0f -> %,.0f MiB; %s",
                probe.name(), bystander.percentileUs(50), bystander.percentileUs(99), before.rssMb(), after.rssMb(),
                note);
        return row.latencyUs(bystander.percentileUs(50), bystander.percentileUs(99))
                .rssMb(before.rssMb(), after.rssMb()).note(note).build();
    }
}
