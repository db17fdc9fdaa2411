package io.sluice.bench.report;

import io.sluice.bench.Measurement;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.jfree.data.category.DefaultCategoryDataset;

/** The server section of docs/benchmarks.md: {@code sluice serve} over HTTP and its client, with charts. */
final class ServerSection extends ReportSection {

    ServerSection(ReportSection page) {
        super(page);
    }

    void write(Path chartDir) throws IOException {
        List<Measurement> all = rows.where(m -> "server".equals(m.suite()) && m.measured()
                && !REMOTE_CLIENT.equals(m.variant()));
        List<Measurement> server = all.stream().filter(m -> !m.variant().endsWith("/eviction_flood")).toList();
        List<Measurement> flood = all.stream().filter(m -> m.variant().endsWith("/eviction_flood")).toList();
        if (all.isEmpty()) {
            return;
        }
        line("## Server: `sluice serve` under HTTP load");
        line();
        line("`sluice serve` in its own JVM, as a user starts it, answering `POST /v1/check` (JSON) from "
                + "[wrk](https://github.com/wg/wrk) (one thread, as many connections as the Redis tables' largest "
                + "number in flight) on this same machine, on the in-memory store and on the run's redis-server. The "
                + "limit is the Redis tables' (token_bucket, 1,000 per second per key, bursts of 100): the hot key is "
                + "mostly rejected (429), each of the many keys admitted. Each server is warmed up, then each row "
                + "has a warm-up of its own and several measured runs on fresh keys: decisions/s and latencies are "
                + "medians of the runs, *over-admitted* counts admissions beyond burst + rate × each run's length. "
                + "*library, same load* is the Redis table's Sluice row for the same algorithm, mode, keys and "
                + "requests in flight (async), made in process: the difference is what HTTP, JSON and the server "
                + "cost. *empty endpoint* is the ceiling, measured right after the memory rows with the same load: "
                + "the same HTTP stack (Armeria with the server's settings, `io.sluice.server.EmptyEndpoint`) "
                + "answering a constant 200 without reading the request or touching a store; *÷ empty endpoint* is "
                + "a memory row's rate over it (target ≥ 0.7×). "
                + "Source: `sluice-bench/src/main/java/io/sluice/bench/server/`.");
        line();
        DefaultCategoryDataset data = new DefaultCategoryDataset();
        for (Measurement m : server) {
            data.addValue(m.decisionsPerS(), "sluice serve",
                    m.variant() + ", " + (m.keys() == 1 ? "hot key" : String.format(Locale.ROOT, "%,d keys", m.keys())));
        }
        Charts.bars(chartDir.resolve("server.png"), "sluice serve, POST /v1/check (higher is better)", null,
                "decisions per second", data, false, 900, 80 + 40 * server.size());
        line("![decisions per second, sluice serve](bench/server.png)");
        line();
        line("| store | keys | connections | decisions/s | p50 µs | p99 µs | admitted | over-admitted | "
                + "Redis CPU µs/decision | Redis commands/decision | library, same load | server ÷ library | "
                + "÷ empty endpoint |");
        line("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
        Optional<Measurement> ceiling = server.stream().filter(m -> CEILING.equals(m.variant())).findFirst();
        for (Measurement m : server) {
            String libraryVariant = m.variant().endsWith("/leased") ? "leased" : "plain";
            Optional<Measurement> library = m.variant().startsWith("redis")
                    ? rows.find("redis", "sluice", m.algorithm(), "async", m.keys(), null, m.inFlight(), libraryVariant)
                    : Optional.empty();
            Double ratio = library.map(l -> m.decisionsPerS() / l.decisionsPerS()).orElse(null);
            line("| " + m.variant() + " | " + Format.count((double) m.keys()) + " | " + m.inFlight() + " | "
                    + Format.count(m.decisionsPerS()) + " | " + Format.decimal(m.p50Us(), 0) + " | "
                    + Format.decimal(m.p99Us(), 0) + " | " + Format.percent(m.admittedFraction()) + " | "
                    + Format.count(m.overAdmitted()) + " | " + Format.decimal(m.redisCpuUsPerDecision(), 1) + " | "
                    + Format.decimal(m.redisCmdsPerDecision(), 1) + " | "
                    + Format.count(library.map(Measurement::decisionsPerS).orElse(null)) + " | "
                    + Format.ratio(ratio) + " | "
                    + Format.ratio(m.variant().equals("memory") ? ceiling.map(c -> m.decisionsPerS()
                    / c.decisionsPerS()).orElse(null) : null) + " |");
        }
        line();
        if (!flood.isEmpty()) {
            line("### Eviction flood: a bystander while another client sends a new key with every request");
            line();
            line("One server on the in-memory store bounded at `memory?max_keys=200000`, started with the heap "
                    + "`./sluice serve` gives it. A bystander (wrk, 4 connections, 1,000 keys) alone, then while a "
                    + "flood (wrk, 32 connections, a key never seen in every request) pushes the store past its bound, "
                    + "so that each of the flood's requests evicts. Its p99 must stay near the bystander's alone, and "
                    + "the server's resident memory flat (issue 17). Source: "
                    + "`sluice-bench/src/main/java/io/sluice/bench/server/EvictionFlood.java`.");
            line();
            line("| bystander | decisions/s | p50 µs | p99 µs | admitted | RSS before MiB | RSS after MiB | note |");
            line("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |");
            for (Measurement m : flood) {
                line("| " + m.mode().replace('_', ' ') + " | " + Format.count(m.decisionsPerS()) + " | "
                        + Format.decimal(m.p50Us(), 0) + " | " + Format.decimal(m.p99Us(), 0) + " | "
                        + Format.percent(m.admittedFraction()) + " | " + Format.decimal(m.rssBeforeMb(), 0) + " | "
                        + Format.decimal(m.rssAfterMb(), 0) + " | " + Format.cell(m.note()) + " |");
            }
            line();
        }
        remoteClient();
    }

    /** The server suite's ceiling row: an empty endpoint of the server's HTTP stack. */
    private static final String CEILING = "empty-endpoint";

    /** The server suite's row of the server's variant measured through {@code sluice-client}'s RemoteStore. */
    private static final String REMOTE_CLIENT = "memory/remote-client";

    private void remoteClient() {
        List<Measurement> remote = rows.where(m -> "server".equals(m.suite()) && m.measured()
                && REMOTE_CLIENT.equals(m.variant()));
        if (remote.isEmpty()) {
            return;
        }
        line("**The library as the server's client** (`sluice-client`'s `RemoteStore`, see "
                + "[remote-client.md](remote-client.md)): one process, this benchmark's, keeping as many decisions in "
                + "flight as wrk has connections, on one HTTP/2 connection to the in-memory server above (`POST "
                + "/v1/store/call`, or `/v1/store/calls` with its default batching, the same rule), beside wrk's row for the same server and keys (HTTP/1.1, one "
                + "connection per request in flight, `POST /v1/check`). Target: at least 0.5× wrk's rate.");
        line();
        line("| keys | in flight | decisions/s | p50 µs | p99 µs | admitted | over-admitted | wrk, same server | "
                + "client ÷ wrk |");
        line("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
        for (Measurement m : remote) {
            Optional<Measurement> wrk = rows.find("server", "sluice", m.algorithm(), "http", m.keys(), null, null,
                    "memory");
            Double ratio = wrk.map(w -> m.decisionsPerS() / w.decisionsPerS()).orElse(null);
            line("| " + Format.count((double) m.keys()) + " | " + m.inFlight() + " | " + Format.count(m.decisionsPerS())
                    + " | " + Format.decimal(m.p50Us(), 0) + " | " + Format.decimal(m.p99Us(), 0) + " | "
                    + Format.percent(m.admittedFraction()) + " | " + Format.count(m.overAdmitted()) + " | "
                    + Format.count(wrk.map(Measurement::decisionsPerS).orElse(null)) + " | " + Format.ratio(ratio)
                    + " |");
        }
        line();
    }
}
