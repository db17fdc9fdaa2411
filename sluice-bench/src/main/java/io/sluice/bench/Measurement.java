package io.sluice.bench;

import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * One row of {@code bench-results.json}: one system measured in one configuration. Fields that do not apply to
 * the suite are null (the schema is in {@code sluice-bench/README.md}).
 *
 * @param suite                    local, redis, redis-attack, memory, server or replay
 * @param system                   sluice, guava, bucket4j, bucket4j-batch, resilience4j, redisson or bare-lua
 * @param variant                  how the system was used when it has several ways (Sluice on Redis: plain,
 *                                 redis-benchmark; later coalesced, leased, synced), else null
 * @param mode                     local: always_granted or mostly_rejected; redis: sync, async or
 *                                 redis-benchmark; memory: one_request_per_key or log_1h_10rps; replay: trace
 * @param algorithm                the algorithm as Sluice names it (peers: the nearest, e.g. Guava is
 *                                 smooth_bursty)
 * @param config                   the limit as configured, in words
 * @param keys                     distinct keys the load cycles through
 * @param threads                  threads issuing requests (local, redis sync)
 * @param inFlight                 requests outstanding at any time (redis)
 * @param decisionsPerS            decisions per second, all threads together (median of runs on Redis)
 * @param p50Us                    median latency of one decision, microseconds (redis)
 * @param p99Us                    99th percentile latency, microseconds (redis)
 * @param nsPerOp                  nanoseconds per decision per thread (local: median of the JMH iterations of
 *                                 average time)
 * @param nsPerOpError             JMH's 99.9% confidence half-width of its mean
 * @param allocBytesPerOp          bytes allocated per decision (local: JMH's GC profiler, gc.alloc.rate.norm),
 *                                 which unlike time does not depend on what else the machine is doing
 * @param admittedFraction         share of decisions that admitted
 * @param redisCpuUsPerDecision    Redis CPU (INFO CPU, user + sys) per decision, microseconds
 * @param redisCmdsPerDecision     Redis commands (INFO COMMANDSTATS, script internals included) per decision
 * @param redisCommandsPerDecision the same by command name
 * @param bytesPerKey              Redis MEMORY USAGE of everything one key stores, averaged
 * @param usedMemoryBytesPerKey    Redis used_memory growth per key
 * @param overAdmitted             admissions beyond what the configured limit allows, summed over keys
 * @param rssBeforeMb              server: the server process's resident set (VmRSS) before the row's load, MiB
 * @param rssAfterMb               server: the same after it
 * @param runs                     measured runs the medians are taken over
 * @param note                     why a value is missing, or what to know when reading it
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
public record Measurement(
        String suite,
        String system,
        String variant,
        String mode,
        String algorithm,
        String config,
        Integer keys,
        Integer threads,
        Integer inFlight,
        Double decisionsPerS,
        Double p50Us,
        Double p99Us,
        Double nsPerOp,
        Double nsPerOpError,
        Double allocBytesPerOp,
        Double admittedFraction,
        Double redisCpuUsPerDecision,
        Double redisCmdsPerDecision,
        Map<String, Double> redisCommandsPerDecision,
        Double bytesPerKey,
        Double usedMemoryBytesPerKey,
        Long overAdmitted,
        Double rssBeforeMb,
        Double rssAfterMb,
        Integer runs,
        String note) {

    /** Starts a row of {@code suite} for {@code system}. */
    public static Builder of(String suite, String system) {
        return new Builder(suite, system);
    }

    /** This row with another {@link #variant}. */
    public Measurement withVariant(String variant) {
        return new Measurement(suite, system, variant, mode, algorithm, config, keys, threads, inFlight, decisionsPerS,
                p50Us, p99Us, nsPerOp, nsPerOpError, allocBytesPerOp, admittedFraction, redisCpuUsPerDecision,
                redisCmdsPerDecision, redisCommandsPerDecision, bytesPerKey, usedMemoryBytesPerKey, overAdmitted,
                rssBeforeMb, rssAfterMb, runs, note);
    }

    /** Whether a measured value is present (a row may only carry a note). */
    public boolean measured() {
        return decisionsPerS != null || bytesPerKey != null;
    }

    /** Fills a {@link Measurement} field by field; unset fields stay null. */
    public static final class Builder {
        private final String suite;
        private final String system;
        private String variant;
        private String mode;
        private String algorithm;
        private String config;
        private Integer keys;
        private Integer threads;
        private Integer inFlight;
        private Double decisionsPerS;
        private Double p50Us;
        private Double p99Us;
        private Double nsPerOp;
        private Double nsPerOpError;
        private Double allocBytesPerOp;
        private Double admittedFraction;
        private Double redisCpuUsPerDecision;
        private Double redisCmdsPerDecision;
        private Map<String, Double> redisCommandsPerDecision;
        private Double bytesPerKey;
        private Double usedMemoryBytesPerKey;
        private Long overAdmitted;
        private Double rssBeforeMb;
        private Double rssAfterMb;
        private Integer runs;
        private String note;

        private Builder(String suite, String system) {
            this.suite = suite;
            this.system = system;
        }

        public Builder variant(String variant) {
            this.variant = variant;
            return this;
        }

        public Builder mode(String mode) {
            this.mode = mode;
            return this;
        }

        public Builder algorithm(String algorithm) {
            this.algorithm = algorithm;
            return this;
        }

        public Builder config(String config) {
            this.config = config;
            return this;
        }

        public Builder keys(int keys) {
            this.keys = keys;
            return this;
        }

        public Builder threads(int threads) {
            this.threads = threads;
            return this;
        }

        public Builder inFlight(int inFlight) {
            this.inFlight = inFlight;
            return this;
        }

        public Builder decisionsPerS(double decisionsPerS) {
            this.decisionsPerS = finite(decisionsPerS);
            return this;
        }

        public Builder latencyUs(double p50, double p99) {
            this.p50Us = finite(p50);
            this.p99Us = finite(p99);
            return this;
        }

        public Builder nsPerOp(double nsPerOp, double error) {
            this.nsPerOp = finite(nsPerOp);
            this.nsPerOpError = finite(error);
            return this;
        }

        public Builder allocBytesPerOp(double bytes) {
            this.allocBytesPerOp = finite(bytes);
            return this;
        }

        public Builder admittedFraction(double admittedFraction) {
            this.admittedFraction = finite(admittedFraction);
            return this;
        }

        public Builder redisCpuUsPerDecision(double us) {
            this.redisCpuUsPerDecision = finite(us);
            return this;
        }

        public Builder redisCommands(double total, Map<String, Double> byCommand) {
            this.redisCmdsPerDecision = finite(total);
            this.redisCommandsPerDecision = byCommand == null ? null : Collections.unmodifiableMap(new TreeMap<>(byCommand));
            return this;
        }

        public Builder bytesPerKey(double bytesPerKey) {
            this.bytesPerKey = finite(bytesPerKey);
            return this;
        }

        public Builder usedMemoryBytesPerKey(double bytes) {
            this.usedMemoryBytesPerKey = finite(bytes);
            return this;
        }

        public Builder overAdmitted(long overAdmitted) {
            this.overAdmitted = overAdmitted;
            return this;
        }

        public Builder rssMb(double before, double after) {
            this.rssBeforeMb = finite(before);
            this.rssAfterMb = finite(after);
            return this;
        }

        public Builder runs(int runs) {
            this.runs = runs;
            return this;
        }

        public Builder note(String note) {
            this.note = note;
            return this;
        }

        public Measurement build() {
            return new Measurement(suite, system, variant, mode, algorithm, config, keys, threads, inFlight,
                    decisionsPerS, p50Us, p99Us, nsPerOp, nsPerOpError, allocBytesPerOp, admittedFraction, redisCpuUsPerDecision,
                    redisCmdsPerDecision, redisCommandsPerDecision, bytesPerKey, usedMemoryBytesPerKey,
                    overAdmitted, rssBeforeMb, rssAfterMb, runs, note);
        }

        // JSON has no NaN or infinity: a value that cannot be computed is absent.
        private static Double finite(double v) {
            return Double.isFinite(v) ? v : null;
        }
    }
}
