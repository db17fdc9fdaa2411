package io.sluice.bench.redis;

import io.sluice.Mode;
import io.sluice.bench.BenchContext;
import io.sluice.bench.Measurement;
import io.sluice.bench.Suite;
import io.sluice.redis.RedisStore;
import io.sluice.testkit.redis.RespConnection;
import java.util.ArrayList;
import java.util.List;

/**
 * A hot key under attack: one key limited to 10 per second (bursts of 10), hammered with 64 requests in flight,
 * asynchronously, as a login form under password guessing; after the first burst nearly every request is denied.
 * Sluice in exact mode as users get it (cached denials on: a denial Redis has just given is repeated locally
 * while Redis would still give it, docs/cached-denials.md), Sluice with the cache off, the bare Lua script and
 * Bucket4j, on the redis-server of the run. Rows as {@link RedisSuite}'s (suite {@code redis-attack}; a Sluice
 * row's variant is {@code plain}, or {@code plain-nocache} with the cache off); over-admissions are counted against
 * the 10 per second.
 *
 * <p>{@code ./sluice bench --quick --suites redis-attack --no-docs --out attack.json} runs these rows alone.
 */
public final class RedisAttackSuite implements Suite {

    /** Requests in flight: the attacker's concurrency. */
    static final int IN_FLIGHT = 64;

    @Override
    public String name() {
        return "redis-attack";
    }

    @Override
    public List<Measurement> run(BenchContext context) throws Exception {
        if (!LocalRedis.onPath("redis-server")) {
            return List.of(Measurement.of(name(), "all").note("skipped: redis-server is not on the PATH").build());
        }
        LocalRedis redis = context.redis();
        String uri = redis.uri();
        RedisLimits limits = RedisLimits.ATTACK;
        List<RedisSuite.Entry> entries = new ArrayList<>();
        entries.add(new RedisSuite.Entry("sluice", "token_bucket", () -> new SluiceContender(uri, "token_bucket",
                Mode.exact(), limits, RedisStore.Builder.DEFAULT_TIMEOUT, true)));
        entries.add(new RedisSuite.Entry("sluice", "token_bucket", () -> new SluiceContender(uri, "token_bucket",
                Mode.exact(), limits, RedisStore.Builder.DEFAULT_TIMEOUT, false)));
        entries.add(new RedisSuite.Entry("bare-lua", "token_bucket", () -> new BareLuaContender(uri, limits)));
        entries.add(new RedisSuite.Entry("bucket4j", "token_bucket", () -> new Bucket4jContender(uri, false, limits)));
        List<Measurement> rows = new ArrayList<>();
        List<RedisContender> contenders = new ArrayList<>();
        try (RespConnection admin = redis.admin()) {
            context.programVersion("redis", RedisStats.version(admin));
            for (RedisSuite.Entry entry : entries) {
                if (context.selected(entry.system(), entry.algorithm())) {
                    RedisContender contender = RedisSuite.open(context, admin, entry, rows);
                    if (contender != null) {
                        contenders.add(contender);
                    }
                }
            }
            // One unmeasured pass over every contender first: the first row measured must not be the only one
            // that runs in a cold JVM (its warm-up alone is short in the quick profile).
            for (RedisContender contender : contenders) {
                try (LoadDriver driver = new LoadDriver(contender, RedisSuite.keys(1), true, IN_FLIGHT)) {
                    admin.call("FLUSHALL");
                    driver.start();
                    Thread.sleep(context.profile().redisWarmupMillis());
                    driver.stop();
                }
            }
            for (RedisContender contender : contenders) {
                context.progress().say("redis-attack: %s %s, 1 key, async, %d in flight", contender.system(),
                        variant(contender), IN_FLIGHT);
                Measurement row;
                try {
                    row = RedisSuite.measureRow(name(), context, admin, contender, RedisSuite.keys(1), true,
                            IN_FLIGHT);
                } catch (RuntimeException e) {
                    row = Measurement.of(name(), contender.system()).algorithm(contender.algorithm())
                            .note("failed: " + RedisSuite.message(e)).build();
                }
                if ("sluice".equals(row.system())) {
                    row = row.withVariant(variant(contender));
                }
                rows.add(row);
                context.progress().say("  %,9.0f decisions/s, %5.2f us Redis CPU/decision, %d over-admitted",
                        row.decisionsPerS() == null ? Double.NaN : row.decisionsPerS(),
                        row.redisCpuUsPerDecision() == null ? Double.NaN : row.redisCpuUsPerDecision(),
                        row.overAdmitted() == null ? 0 : row.overAdmitted());
            }
        } finally {
            contenders.forEach(RedisContender::close);
        }
        return rows;
    }

    private static String variant(RedisContender contender) {
        if (contender instanceof SluiceContender s) {
            return s.cachesDenials() ? "plain" : "plain-nocache";
        }
        return "";
    }
}
