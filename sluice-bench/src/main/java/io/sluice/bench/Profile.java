package io.sluice.bench;

import java.util.List;

/**
 * How long and how wide a run is. {@link #FULL} is what docs/benchmarks.md shows (under 30 minutes on two
 * cores), {@link #QUICK} a smoke run of the same table (under 4 minutes); tests build smaller ones.
 *
 * @param name                 "full" or "quick" (or a test's name), recorded in the results
 * @param jmhForks             JVMs forked per benchmark (0: in this JVM, for tests only)
 * @param jmhWarmupIterations  JMH warm-up iterations
 * @param jmhWarmupMillis      length of one warm-up iteration
 * @param jmhIterations        JMH measured iterations
 * @param jmhIterationMillis   length of one measured iteration
 * @param localThreads         thread counts of the local suite
 * @param localSluiceAlgorithms Sluice algorithms of the local suite
 * @param localKeyCounts       key counts of the local suite
 * @param localPeers           peers of the local suite (guava, bucket4j, resilience4j)
 * @param manyKeys             the "many keys" count of the Redis suite
 * @param inFlights            requests in flight of the Redis suite
 * @param redisSluiceAlgorithms Sluice algorithms of the Redis suite
 * @param redisSluiceModes     Sluice rows of the Redis suite in a mode other than exact (plain), as
 *                             {@code algorithm/mode}, e.g. {@code token_bucket/leased}; {@code algorithm/three_limits}
 *                             is exact mode on a rule of three limits
 * @param redisPeers           peers of the Redis suite (bucket4j, bucket4j-batch, redisson, bare-lua)
 * @param redisWarmupMillis    warm-up before the measured runs of a Redis row
 * @param redisRuns            measured runs per Redis row (the row reports their medians)
 * @param redisRunMillis       length of one measured run
 * @param ceilingRequests      requests per redis-benchmark ceiling run
 * @param memoryKeys           keys created per memory row
 * @param logKeys              keys driven through a whole hour for the sliding log vs rolling window rows
 *                             (0: no such rows); every key gets the same requests, so more keys cost time
 *                             (the sliding log's hour: 55 s of Redis CPU per key at load 8 on 2 cores) and
 *                             change no figure
 * @param replayLines          trace lines of the larger replay run (the smaller has a tenth)
 */
public record Profile(String name, int jmhForks, int jmhWarmupIterations, int jmhWarmupMillis, int jmhIterations,
                      int jmhIterationMillis, List<Integer> localThreads, List<String> localSluiceAlgorithms,
                      List<Integer> localKeyCounts, List<String> localPeers, int manyKeys, List<Integer> inFlights,
                      List<String> redisSluiceAlgorithms, List<String> redisSluiceModes, List<String> redisPeers,
                      int redisWarmupMillis,
                      int redisRuns, int redisRunMillis, int ceilingRequests, int memoryKeys, int logKeys,
                      int replayLines) {

    private static final List<String> LOCAL_ALGORITHMS = List.of("token_bucket", "gcra", "fixed_window",
            "sliding_window", "smooth_bursty");
    private static final List<String> LOCAL_PEERS = List.of("guava", "bucket4j", "resilience4j");
    private static final List<String> REDIS_MODES = List.of("token_bucket/coalesced", "token_bucket/leased",
            "gcra/coalesced", "gcra/leased", "fixed_window/leased", "fixed_window/synced",
            "token_bucket/three_limits");
    private static final List<String> REDIS_PEERS = List.of("bucket4j", "bucket4j-batch", "redisson", "bare-lua");

    /** The run docs/benchmarks.md reports. */
    public static final Profile FULL = new Profile("full", 1, 3, 1000, 5, 1000, List.of(1, 2), LOCAL_ALGORITHMS,
            List.of(1, 10_000), LOCAL_PEERS, 10_000, List.of(1, 8, 64), LOCAL_ALGORITHMS, REDIS_MODES, REDIS_PEERS, 1000, 3,
            1000, 200_000, 10_000, 1, 1_000_000);

    /**
     * The smoke run: every table and chart, short measurements. JMH runs in this JVM (no forks) to fit the time
     * budget, so benchmarks share one JIT profile: its local figures are not comparable with a full run's.
     */
    public static final Profile QUICK = new Profile("quick", 0, 1, 300, 2, 200, List.of(1, 2), LOCAL_ALGORITHMS,
            List.of(1, 10_000), LOCAL_PEERS, 10_000, List.of(1, 8, 64), List.of("token_bucket", "gcra"),
            List.of("token_bucket/coalesced", "token_bucket/leased", "token_bucket/three_limits"), REDIS_PEERS, 200, 1,
            400, 20_000, 1_000, 1, 200_000);
}
