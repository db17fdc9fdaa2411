package example;

import io.sluice.Decision;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.Store;
import io.sluice.rules.RuleFile;

/** A program on the module path: a rule from a rule file, decided on the in-memory store. */
public class Main {
    public static void main(String[] args) throws Exception {
        RuleFile file = RuleFile.parse("inline.yaml", String.join("\n",
                "limits:",
                "  per_second: {algorithm: token_bucket, capacity: 2, refill_tokens: 2, refill_period: 1s}",
                "rules:",
                "  api: {limits: [per_second]}",
                ""));
        Rule api = file.rules().get("api");
        StringBuilder seen = new StringBuilder();
        try (RateLimiter limiter = RateLimiter.builder(api).store(Store.memory().build()).build()) {
            for (int i = 0; i < 3; i++) {
                Decision d = limiter.tryAcquire("user:42");
                seen.append(d.allowed() ? '+' : '.');
            }
        }
        Module core = RateLimiter.class.getModule();
        System.out.println(core.getName() + " " + seen + " internal exported: "
                + core.isExported("io.sluice.internal"));
    }
}
