package io.sluice.redis.internal;

import io.lettuce.core.RedisURI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Parses the store's Redis URIs (Lettuce syntax) and checks that they fit the topology: one {@code redis://} or
 * {@code rediss://} URI, or one {@code redis-sentinel://} URI, or one or more cluster seeds.
 */
public final class RedisUris {

    private static final String SENTINEL = "redis-sentinel://";
    private static final List<String> SCHEMES = List.of("redis://", "rediss://", SENTINEL);

    private RedisUris() {}

    /**
     * Splits a comma-separated list of URIs. A Sentinel URI is never split (its hosts are comma-separated);
     * an element without a scheme inherits the scheme and credentials of the first element.
     *
     * @throws IllegalArgumentException for a null or blank string, or a first element without a known scheme
     */
    public static List<String> split(String uris) {
        if (uris == null || uris.isBlank()) {
            throw new IllegalArgumentException("uri must be a non-empty Redis URI such as redis://127.0.0.1:6379, was "
                    + (uris == null ? "null" : "'" + uris + "'"));
        }
        String trimmed = uris.trim();
        String scheme = scheme(trimmed);
        if (scheme == null) {
            throw new IllegalArgumentException("uri must start with one of " + SCHEMES + ", was '" + redact(trimmed)
                    + "'");
        }
        if (scheme.equals(SENTINEL)) {
            return List.of(trimmed);
        }
        String[] parts = trimmed.split(",");
        String first = parts[0].trim();
        int at = first.lastIndexOf('@');
        String inherited = at > 0 ? first.substring(0, at + 1) : scheme;
        List<String> out = new ArrayList<>();
        for (String part : parts) {
            String p = part.trim();
            if (p.isEmpty()) {
                throw new IllegalArgumentException("uri must not hold an empty element, was '" + redact(trimmed) + "'");
            }
            out.add(scheme(p) != null ? p : inherited + p);
        }
        return out;
    }

    /**
     * Parses URIs for the topology; each URI's command timeout is {@code timeout} (Lettuce's sync API and its
     * Sentinel lookups read it).
     *
     * @throws IllegalArgumentException when none is given, a URI does not parse, or the URIs do not fit
     *                                  {@code cluster} (several URIs or Sentinel for standalone, Sentinel or
     *                                  a database index for a cluster)
     */
    public static List<RedisURI> parse(List<String> uris, boolean cluster, Duration timeout) {
        if (uris.isEmpty()) {
            throw new IllegalArgumentException("uri is required, e.g. redis://127.0.0.1:6379");
        }
        List<RedisURI> parsed = new ArrayList<>();
        for (String uri : uris) {
            boolean sentinel = SENTINEL.equals(scheme(uri));
            if (cluster && sentinel) {
                throw new IllegalArgumentException("a cluster takes redis:// or rediss:// seed URIs, not Sentinel: '"
                        + redact(uri) + "'");
            }
            RedisURI u;
            try {
                u = RedisURI.create(uri);
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("uri is not a valid Redis URI: '" + redact(uri) + "': "
                        + e.getMessage(), e);
            }
            if (cluster && u.getDatabase() != 0) {
                throw new IllegalArgumentException("a cluster has only database 0, uri selects " + u.getDatabase()
                        + ": '" + redact(uri) + "'");
            }
            u.setTimeout(timeout);
            parsed.add(u);
        }
        if (!cluster && parsed.size() > 1) {
            throw new IllegalArgumentException("a standalone or Sentinel store takes one uri, got " + parsed.size()
                    + "; for a Redis Cluster call cluster(true)");
        }
        return parsed;
    }

    /** The URI without its credentials, for messages. */
    public static String redact(String uri) {
        int scheme = uri.indexOf("://");
        int at = uri.indexOf('@');
        if (scheme >= 0 && at > scheme) {
            return uri.substring(0, scheme + 3) + "***@" + uri.substring(at + 1);
        }
        return uri;
    }

    /** Host, port and TLS of a parsed URI, without credentials, for messages. */
    public static String describe(List<RedisURI> uris) {
        List<String> out = new ArrayList<>();
        for (RedisURI u : uris) {
            if (!u.getSentinels().isEmpty()) {
                out.add("sentinel " + u.getSentinels().get(0).getHost() + ":" + u.getSentinels().get(0).getPort()
                        + " master " + u.getSentinelMasterId());
            } else {
                out.add((u.isSsl() ? "rediss://" : "redis://") + u.getHost() + ":" + u.getPort());
            }
        }
        return String.join(",", out);
    }

    private static String scheme(String uri) {
        String lower = uri.toLowerCase(Locale.ROOT);
        for (String s : SCHEMES) {
            if (lower.startsWith(s)) {
                return s;
            }
        }
        return null;
    }
}
