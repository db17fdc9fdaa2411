package io.sluice.bench.local;

import io.sluice.FixedWindow;
import io.sluice.Gcra;
import io.sluice.Limit;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.SlidingWindow;
import io.sluice.SmoothBursty;
import io.sluice.TokenBucket;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Sluice's in-memory store: {@code RateLimiter.tryAcquire(key)} of one permit, through the public facade (key
 * validation and the {@code Decision} included), per algorithm.
 *
 * <p>{@code sluice bench} runs it; by hand, after {@code mvn -pl sluice-bench -am package -DskipTests}:
 * <pre>
 * java -cp sluice-bench/target/sluice-bench.jar org.openjdk.jmh.Main SluiceLocalBenchmark \
 *     -p algorithm=token_bucket,gcra -p mode=always_granted -p keys=1,10000 -t 1 -f 1 -wi 3 -w 1s -i 5 -r 1s
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class SluiceLocalBenchmark {

    /** The algorithms of the local suite. */
    public static final String[] ALGORITHMS = {"token_bucket", "gcra", "fixed_window", "sliding_window",
            "smooth_bursty"};

    @State(Scope.Benchmark)
    public static class Limiter {
        @Param({"token_bucket", "gcra", "fixed_window", "sliding_window", "smooth_bursty"})
        public String algorithm;

        @Param({"always_granted", "mostly_rejected"})
        public String mode;

        @Param({"1", "10000"})
        public int keys;

        RateLimiter limiter;

        @Setup(Level.Trial)
        public void setUp() {
            limiter = RateLimiter.builder(Rule.of("bench", limit(algorithm, LocalMode.of(mode)))).build();
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            limiter.close();
        }
    }

    @Benchmark
    public boolean tryAcquire(Limiter state, KeyCursor cursor, Outcomes outcomes) {
        return outcomes.count(state.limiter.tryAcquire(cursor.next()).allowed());
    }

    /** The limit of {@code algorithm} in {@code mode}. */
    public static Limit limit(String algorithm, LocalMode mode) {
        Duration second = Duration.ofSeconds(1);
        boolean granting = mode == LocalMode.ALWAYS_GRANTED;
        long rate = granting ? LocalMode.GRANTING_RATE : LocalMode.REJECTING_RATE;
        return switch (algorithm) {
            case "token_bucket" -> TokenBucket.of(rate, rate, second);
            // GCRA spaces permits at least 1 µs apart, so its rate stops at 10^6/s; the burst carries the rest.
            case "gcra" -> granting ? new Gcra("gcra", 1_000_000, second, rate) : Gcra.of(rate, second);
            case "fixed_window" -> FixedWindow.of(rate, second);
            case "sliding_window" -> SlidingWindow.of(rate, second);
            case "smooth_bursty" -> SmoothBursty.of(granting ? 1_000_000 : rate);
            default -> throw new IllegalArgumentException("no local benchmark for algorithm " + algorithm);
        };
    }
}
