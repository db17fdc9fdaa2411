package io.sluice.spring.boot;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Sluice's Spring Boot configuration, under sluice.*. Every property is optional: with none, Sluice
 * starts with an in-memory store and no rules. Values are checked at start-up; a bad one fails the application
 * with a message naming the property and what was expected.
 */
@ConfigurationProperties("sluice")
public class SluiceProperties {

    /**
     * Rule files in the format of sluice serve and sluice replay (YAML or JSON), as Spring
     * resource locations, e.g. classpath:rules.yaml or file:/etc/sluice/rules.yaml. Several are
     * allowed; a rule name may be defined only once across them and sluice.define.
     */
    private List<String> rules = new ArrayList<>();

    /** Limits and rules declared in properties, in the same schema as a rule file's. */
    private final Define define = new Define();

    /** Mode and failure policy for rules that leave theirs at the default. */
    private final Defaults defaults = new Defaults();

    /** Where the limit state lives: memory (this JVM only) or redis (shared by every instance). */
    private StoreType store = StoreType.MEMORY;

    /** The Redis store, used when sluice.store=redis. */
    private final Redis redis = new Redis();

    /** The HTTP filters (servlet and WebFlux). */
    private final Web web = new Web();

    /** The store kinds. */
    public enum StoreType {
        /** In this JVM's memory: limits are per instance. */
        MEMORY,
        /** In Redis: every instance on the same Redis (and prefix) shares each limit exactly. */
        REDIS
    }

    public List<String> getRules() {
        return rules;
    }

    public void setRules(List<String> rules) {
        this.rules = rules;
    }

    public Define getDefine() {
        return define;
    }

    public Defaults getDefaults() {
        return defaults;
    }

    public StoreType getStore() {
        return store;
    }

    public void setStore(StoreType store) {
        this.store = store;
    }

    public Redis getRedis() {
        return redis;
    }

    public Web getWeb() {
        return web;
    }

    /** Limits and rules in properties, e.g. sluice.define.limits.per_second.algorithm=token_bucket. */
    public static class Define {

        /**
         * Limits by name: each an algorithm and that algorithm's parameters, named as in a rule file
         * (refill_tokens, or refill-tokens), e.g. {algorithm: sliding_log, limit: 30,
         * window: 1m}.
         */
        private Map<String, Map<String, String>> limits = new LinkedHashMap<>();

        /**
         * Rules by name: the limits they apply together, and optionally their mode, failure policy and tiers
         * (tiers.NAME.keys with tiers.NAME.limits, .unlimited=true or .blocked=true).
         */
        private Map<String, RuleDefinition> rules = new LinkedHashMap<>();

        public Map<String, Map<String, String>> getLimits() {
            return limits;
        }

        public void setLimits(Map<String, Map<String, String>> limits) {
            this.limits = limits;
        }

        public Map<String, RuleDefinition> getRules() {
            return rules;
        }

        public void setRules(Map<String, RuleDefinition> rules) {
            this.rules = rules;
        }
    }

    /** One rule in properties; the fields are a rule file's. */
    public static class RuleDefinition {

        /** Names of the limits the rule applies together (declared in sluice.define.limits). */
        private List<String> limits = new ArrayList<>();

        /** How a shared store enforces the rule: exact (default), coalesced, leased or synced. */
        private String mode;

        /** With mode leased: how long a lease of permits lives, e.g. 200ms. */
        private String leaseTtl;

        /** With mode leased: the most permits one lease takes. */
        private Long maxBatch;

        /** With mode synced: how often local counts are synced with Redis, e.g. 100ms. */
        private String syncInterval;

        /** What the rule decides when the store fails: raise (default), fail_open, fail_closed, local_fallback. */
        private String onFailure;

        /** With on-failure local_fallback: the share of each limit this instance may use alone, in (0, 1]. */
        private Double fallbackShare;

        /**
         * Keys with their own treatment, by tier name, tried in the order given (the first whose keys match a key
         * decides it): each has keys, and limits, unlimited or blocked.
         */
        private Map<String, TierDefinition> tiers = new LinkedHashMap<>();

        public Map<String, TierDefinition> getTiers() {
            return tiers;
        }

        public void setTiers(Map<String, TierDefinition> tiers) {
            this.tiers = tiers;
        }

        public List<String> getLimits() {
            return limits;
        }

        public void setLimits(List<String> limits) {
            this.limits = limits;
        }

        public String getMode() {
            return mode;
        }

        public void setMode(String mode) {
            this.mode = mode;
        }

        public String getLeaseTtl() {
            return leaseTtl;
        }

        public void setLeaseTtl(String leaseTtl) {
            this.leaseTtl = leaseTtl;
        }

        public Long getMaxBatch() {
            return maxBatch;
        }

        public void setMaxBatch(Long maxBatch) {
            this.maxBatch = maxBatch;
        }

        public String getSyncInterval() {
            return syncInterval;
        }

        public void setSyncInterval(String syncInterval) {
            this.syncInterval = syncInterval;
        }

        public String getOnFailure() {
            return onFailure;
        }

        public void setOnFailure(String onFailure) {
            this.onFailure = onFailure;
        }

        public Double getFallbackShare() {
            return fallbackShare;
        }

        public void setFallbackShare(Double fallbackShare) {
            this.fallbackShare = fallbackShare;
        }
    }

    /** One tier of a rule in properties; the fields are a rule file's tier's. */
    public static class TierDefinition {

        /** The exact keys and glob patterns (a star matches any run of characters) of the tier. */
        private List<String> keys = new ArrayList<>();

        /** Names of the limits (declared in sluice.define.limits) that decide the tier's keys in place of the rule's. */
        private List<String> limits = new ArrayList<>();

        /** Whether the tier's keys are always admitted, nothing counted. */
        private Boolean unlimited;

        /** Whether the tier's keys are always rejected. */
        private Boolean blocked;

        public List<String> getKeys() {
            return keys;
        }

        public void setKeys(List<String> keys) {
            this.keys = keys;
        }

        public List<String> getLimits() {
            return limits;
        }

        public void setLimits(List<String> limits) {
            this.limits = limits;
        }

        public Boolean getUnlimited() {
            return unlimited;
        }

        public void setUnlimited(Boolean unlimited) {
            this.unlimited = unlimited;
        }

        public Boolean getBlocked() {
            return blocked;
        }

        public void setBlocked(Boolean blocked) {
            this.blocked = blocked;
        }
    }

    /** Defaults applied to every rule (from files or properties) that leaves the setting at its own default. */
    public static class Defaults {

        /** Failure policy for rules without on_failure: raise, fail_open, fail_closed or local_fallback. */
        private String onFailure;

        /** With on-failure local_fallback: the share of each limit this instance may use alone, in (0, 1]. */
        private Double fallbackShare;

        public String getOnFailure() {
            return onFailure;
        }

        public void setOnFailure(String onFailure) {
            this.onFailure = onFailure;
        }

        public Double getFallbackShare() {
            return fallbackShare;
        }

        public void setFallbackShare(Double fallbackShare) {
            this.fallbackShare = fallbackShare;
        }
    }

    /** The Redis store. */
    public static class Redis {

        /**
         * Redis URI (Lettuce syntax: redis://, rediss://, redis-sentinel://; comma-separated seeds with
         * cluster=true). When unset and spring-boot-starter-data-redis is present, the store connects through the
         * application's Lettuce client (spring.data.redis.*); otherwise it is required.
         */
        private String uri;

        /** Whether uri names the seeds of a Redis Cluster. */
        private boolean cluster;

        /** Namespace of every key the store writes; 1 to 64 characters without braces or whitespace. */
        private String prefix = "sluice";

        /** How long any Redis command may take, connecting included; between 1ms and 1h. */
        private Duration timeout = Duration.ofSeconds(1);

        /**
         * How the store runs its scripts: auto (a Redis 7 functions library where the server allows it, else
         * EVALSHA), functions or eval.
         */
        private String scripting = "auto";

        /**
         * Whether to connect through the application's Lettuce client (and so its event loops) when
         * spring-boot-starter-data-redis is present and uri is unset.
         */
        private boolean useApplicationClient = true;

        /** The circuit breaker in front of Redis. */
        private final Breaker breaker = new Breaker();

        public String getUri() {
            return uri;
        }

        public void setUri(String uri) {
            this.uri = uri;
        }

        public boolean isCluster() {
            return cluster;
        }

        public void setCluster(boolean cluster) {
            this.cluster = cluster;
        }

        public String getPrefix() {
            return prefix;
        }

        public void setPrefix(String prefix) {
            this.prefix = prefix;
        }

        public String getScripting() {
            return scripting;
        }

        public void setScripting(String scripting) {
            this.scripting = scripting;
        }

        public Duration getTimeout() {
            return timeout;
        }

        public void setTimeout(Duration timeout) {
            this.timeout = timeout;
        }

        public boolean isUseApplicationClient() {
            return useApplicationClient;
        }

        public void setUseApplicationClient(boolean useApplicationClient) {
            this.useApplicationClient = useApplicationClient;
        }

        public Breaker getBreaker() {
            return breaker;
        }
    }

    /** The circuit breaker: after this many consecutive failed calls it stops calling Redis for the cool-down. */
    public static class Breaker {

        /** Consecutive failed calls (timeouts, lost connections) that open the breaker; 1 to 1000. */
        private int failures = 3;

        /** How long an open breaker decides by each rule's failure policy before probing Redis; 1ms to 1h. */
        private Duration coolDown = Duration.ofSeconds(2);

        public int getFailures() {
            return failures;
        }

        public void setFailures(int failures) {
            this.failures = failures;
        }

        public Duration getCoolDown() {
            return coolDown;
        }

        public void setCoolDown(Duration coolDown) {
            this.coolDown = coolDown;
        }
    }

    /** The HTTP filters. */
    public static class Web {

        /** Whether the filter is installed (when at least one route is configured). */
        private boolean enabled = true;

        /** Whether admitted responses carry the RateLimit and RateLimit-Policy fields too (rejections always do). */
        private boolean admittedHeaders = true;

        /**
         * How many reverse proxies in front of the application are trusted to append the client's address to
         * X-Forwarded-For. 0 (default): the client address is the connection's peer and forwarded headers are
         * ignored; N: the Nth address from the right of X-Forwarded-For (the one the outermost trusted proxy saw).
         */
        private int trustedProxies;

        /** The filter's order among servlet filters or WebFilters; after Spring Security's (-100) by default. */
        private int filterOrder = 0;

        /** Which requests go to which rule; the first route that matches a request decides it. */
        private List<Route> routes = new ArrayList<>();

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public boolean isAdmittedHeaders() {
            return admittedHeaders;
        }

        public void setAdmittedHeaders(boolean admittedHeaders) {
            this.admittedHeaders = admittedHeaders;
        }

        public int getTrustedProxies() {
            return trustedProxies;
        }

        public void setTrustedProxies(int trustedProxies) {
            this.trustedProxies = trustedProxies;
        }

        public int getFilterOrder() {
            return filterOrder;
        }

        public void setFilterOrder(int filterOrder) {
            this.filterOrder = filterOrder;
        }

        public List<Route> getRoutes() {
            return routes;
        }

        public void setRoutes(List<Route> routes) {
            this.routes = routes;
        }
    }

    /** One mapping of requests to a rule. */
    public static class Route {

        /** Path patterns (Spring PathPattern syntax, e.g. /api/**, /users/{id}); at least one. */
        private List<String> paths = new ArrayList<>();

        /** HTTP methods the route applies to, e.g. GET, POST; empty for all. */
        private List<String> methods = new ArrayList<>();

        /** The rule that decides matching requests; must be defined in a rule file or sluice.define.rules. */
        private String rule;

        /**
         * Which key a request is counted under: client-address (default), header:NAME, principal,
         * path-variable:NAME (of the matched pattern) or a SpEL expression written #{...} over the request
         * (header('X-Api-Key'), param('q'), pathVariable('id'), principal, clientAddress, method, path). A
         * request for which the source has no value is counted under "anonymous:" and its client address.
         */
        private String key = "client-address";

        /**
         * Permits each request costs: a whole number, or a SpEL expression written #{...} over the request, e.g.
         * #{longHeader('X-Batch-Size', 1)}. Default 1.
         */
        private String cost = "1";

        public List<String> getPaths() {
            return paths;
        }

        public void setPaths(List<String> paths) {
            this.paths = paths;
        }

        public List<String> getMethods() {
            return methods;
        }

        public void setMethods(List<String> methods) {
            this.methods = methods;
        }

        public String getRule() {
            return rule;
        }

        public void setRule(String rule) {
            this.rule = rule;
        }

        public String getKey() {
            return key;
        }

        public void setKey(String key) {
            this.key = key;
        }

        public String getCost() {
            return cost;
        }

        public void setCost(String cost) {
            this.cost = cost;
        }
    }
}
