package io.sluice.server;

import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Every setting of {@code sluice serve}, once: its option, environment variable and config-file key, the name of
 * its value, its default and its meaning. The command line's parser and help ({@link ServeCommand}), the
 * environment, the config file and the table in docs/reference/settings.md all follow this list
 * ({@code ServeSettingsDocTest} checks the table against it).
 */
final class ServeOptions {

    /** How a setting's value is read. */
    enum Kind { TEXT, FILES, FILE, PORT, COUNT, DURATION, BOOLEAN, CHOICE }

    /**
     * One setting.
     *
     * @param option      the long option, e.g. {@code --http-port}
     * @param key         the config file's key, e.g. {@code http_port}; null for {@code --config} itself
     * @param label       the value's name in the help, e.g. {@code PORT}
     * @param kind        how the value is read
     * @param defaultText the default as the help and docs show it
     * @param help        what it does, one line
     */
    record Setting(String option, String key, String label, Kind kind, String defaultText, String help) {

        /** The environment variable: {@code --http-port} is {@code SLUICE_HTTP_PORT}. */
        String env() {
            return "SLUICE_" + option.substring(2).replace('-', '_').toUpperCase(Locale.ROOT);
        }
    }

    static final List<Setting> ALL = List.of(
            new Setting("--rules", "rules", "FILE|DIR", Kind.FILES, "the bundled examples",
                    "a Sluice rule file or an envoyproxy/ratelimit config, or a directory of them (its *.yaml and"
                            + " *.yml); repeatable; reloaded as files change, come and go"),
            new Setting("--store", "store", "SPEC", Kind.TEXT, "memory",
                    "memory (at most 1,000,000 keys), memory?max_keys=N, or a redis://, rediss:// or"
                            + " redis-sentinel:// URI (comma-separated seeds: a Cluster) shared by several servers"),
            new Setting("--bind", "bind", "ADDRESS", Kind.TEXT, "127.0.0.1",
                    "the address to listen on (the default is this machine only)"),
            new Setting("--http-port", "http_port", "PORT", Kind.PORT, "8080", "the HTTP port; 0 picks a free one"),
            new Setting("--grpc-port", "grpc_port", "PORT", Kind.PORT, "8081",
                    "the gRPC port; 0 picks a free one; the HTTP port's number serves gRPC there"),
            new Setting("--config", null, "FILE", Kind.FILE, "none",
                    "a YAML file of these settings, by their keys (docs/reference/settings.md)"),
            new Setting("--token", "token", "TOKEN", Kind.TEXT, "none",
                    "require 'Authorization: Bearer TOKEN' on every API call, HTTP and gRPC"),
            new Setting("--token-file", "token_file", "FILE", Kind.FILE, "none",
                    "... with the token read from FILE (it stays out of ps); not with --token"),
            new Setting("--tls-cert", "tls_cert", "FILE", Kind.FILE, "none: plain text",
                    "serve TLS on both ports with this PEM certificate chain ..."),
            new Setting("--tls-key", "tls_key", "FILE", Kind.FILE, "none", "... and this PEM (PKCS#8) private key"),
            new Setting("--tls-client-ca", "tls_client_ca", "FILE", Kind.FILE, "none: no client certificate",
                    "mutual TLS: serve only clients whose certificate this PEM file's CA issued (needs --tls-cert)"),
            new Setting("--clock", "clock", "server|client", Kind.CHOICE, "server",
                    "whose time decides: the store's, or the remote store client's reading sent with each call"
                            + " (tests and replays only)"),
            new Setting("--log-format", "log_format", "text|json", Kind.CHOICE, "text",
                    "log lines on standard error as text, or as one JSON object per line"),
            new Setting("--log-level", "log_level", "LEVEL", Kind.CHOICE, "info",
                    "the least severe events logged: trace, debug, info, warn, error or off"),
            new Setting("--reload-interval", "reload_interval", "DURATION", Kind.DURATION, "1s",
                    "how often rule files are checked for changes; 0s never"),
            new Setting("--max-body-bytes", "max_body_bytes", "BYTES", Kind.COUNT, "65536",
                    "the largest request body or gRPC message (256 to 67108864)"),
            new Setting("--max-batch", "max_batch", "N", Kind.COUNT, "100",
                    "the most checks per batch and descriptors per Envoy request (1 to 10000)"),
            new Setting("--max-key-length", "max_key_length", "N", Kind.COUNT, "256",
                    "the longest key a check may name (1 to 383, so that domain and key fit one store key)"),
            new Setting("--max-descriptor-entries", "max_descriptor_entries", "N", Kind.COUNT, "16",
                    "the most entries in one descriptor (1 to 1000)"),
            new Setting("--envoy-response-headers", "envoy_response_headers", "true|false", Kind.BOOLEAN, "true",
                    "whether Envoy responses carry rate-limit response headers"),
            new Setting("--shutdown-quiet-period", "shutdown_quiet_period", "DURATION", Kind.DURATION, "1s",
                    "stopping waits until no request has been in flight for this long (0s: stop at once) ..."),
            new Setting("--shutdown-timeout", "shutdown_timeout", "DURATION", Kind.DURATION, "10s",
                    "... but no longer than this in all (at least the quiet period)"),
            new Setting("--redis-timeout", "redis_timeout", "DURATION", Kind.DURATION, "500ms",
                    "how long one Redis command may take, connecting included (1ms to 1h)"),
            new Setting("--redis-breaker-failures", "redis_breaker_failures", "N", Kind.COUNT, "3",
                    "consecutive unavailable Redis calls that open the circuit breaker (1 to 1000)"),
            new Setting("--redis-breaker-pause", "redis_breaker_pause", "DURATION", Kind.DURATION, "250ms",
                    "how long the open breaker decides by the failure policy before one call probes (1ms to 1h)"),
            new Setting("--redis-prefix", "redis_prefix", "PREFIX", Kind.TEXT, "sluice",
                    "the namespace of every Redis key (1 to 64 characters, no braces or whitespace)"),
            new Setting("--redis-cache-denials", "redis_cache_denials", "true|false", Kind.BOOLEAN, "true",
                    "repeat a denial Redis just gave, in exact mode, without a round trip while it still holds"),
            new Setting("--redis-scripting", "redis_scripting", "auto|functions|eval", Kind.CHOICE, "auto",
                    "how the store runs its scripts: a Redis 7 functions library where the server allows it, else"
                            + " EVALSHA (auto), or either one forced"),
            new Setting("--redis-mode", "redis_mode", "exact|coalesced|leased|synced", Kind.CHOICE, "exact",
                    "the mode of rules that set no mode of their own, of limits alone and of envoy limits; a rule"
                            + " the mode cannot run stays exact"),
            new Setting("--redis-lease-ttl", "redis_lease_ttl", "DURATION", Kind.DURATION, "500ms",
                    "with --redis-mode leased: how long a lease's permits may be spent (1ms to 1h)"),
            new Setting("--redis-max-batch", "redis_max_batch", "N", Kind.COUNT, "auto",
                    "with --redis-mode leased: the most permits one lease takes (1 to 10^12; auto: a sixteenth of"
                            + " the rule's smallest limit)"),
            new Setting("--redis-sync-interval", "redis_sync_interval", "DURATION", Kind.DURATION, "100ms",
                    "with --redis-mode synced: how often a node pushes its counts and pulls totals (1ms to 1h)"));

    private ServeOptions() {}

    static Optional<Setting> byKey(String key) {
        return ALL.stream().filter(s -> key.equals(s.key())).findFirst();
    }

    static Setting byOption(String option) {
        return ALL.stream().filter(s -> s.option().equals(option)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no setting " + option));
    }
}
