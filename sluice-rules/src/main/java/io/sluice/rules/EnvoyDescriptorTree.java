package io.sluice.rules;

import io.sluice.rules.EnvoyConfig.Entry;
import io.sluice.rules.EnvoyConfig.Match;
import io.sluice.rules.EnvoyConfig.RateLimit;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * The descriptor tree of one envoyproxy/ratelimit domain, as {@link EnvoyConfigParser} builds it, and the walk of
 * a request descriptor down it ({@link #lookup}): the matching of {@link EnvoyConfig#lookup}, with the statistics
 * key envoy would use. Immutable.
 */
final class EnvoyDescriptorTree {

    private EnvoyDescriptorTree() {
    }

    /** The descriptors of one level, by {@code key} or {@code key_value}, and those containing {@code *}. */
    record Level(Map<String, Branch> byKey, List<Wildcard> wildcards) {
        static final Level EMPTY = new Level(Map.of(), List.of());
    }

    /** A {@code key_value} containing {@code *}, split around its stars once when read. */
    record Wildcard(String finalKey, List<String> parts) {

        /** Whether {@code text} is the parts in order with anything (or nothing) between them. */
        boolean matches(String text) {
            if (parts.size() == 1) {
                return parts.get(0).equals(text);
            }
            String first = parts.get(0);
            String last = parts.get(parts.size() - 1);
            if (text.length() < first.length() + last.length() || !text.startsWith(first) || !text.endsWith(last)) {
                return false;
            }
            int from = first.length();
            int to = text.length() - last.length();
            for (int i = 1; i < parts.size() - 1; i++) {
                int at = text.indexOf(parts.get(i), from);
                if (at < 0 || at + parts.get(i).length() > to) {
                    return false;
                }
                from = at + parts.get(i).length();
            }
            return true;
        }
    }

    /** One configured descriptor: its limit (or null), the level below it and its statistics flags. */
    record Branch(RateLimit rateLimit, Level children, boolean valueToMetric, boolean shareThreshold) {}

    /**
     * The limit a request descriptor falls under in the domain whose top level is {@code level}, with the
     * statistics key and shared counters; null when none applies (see {@link EnvoyConfig#lookup}).
     */
    static Match lookup(String domain, Level level, List<Entry> entries) {
        RateLimit found = null;
        StringBuilder detailedKey = new StringBuilder(domain);
        StringBuilder valueKey = new StringBuilder(domain);
        String[] shared = null;
        for (int i = 0; i < entries.size(); i++) {
            Entry entry = entries.get(i);
            String keyValue = entry.key() + "_" + entry.value();
            detailedKey.append('.').append(keyValue);
            Branch next = level.byKey().get(keyValue);
            String wildcardKey = null;
            if (next == null) {
                for (Wildcard w : level.wildcards()) {
                    if (w.matches(keyValue)) {
                        next = level.byKey().get(w.finalKey());
                        wildcardKey = w.finalKey();
                        break;
                    }
                }
            }
            boolean byValue = next != null;
            if (next == null) {
                next = level.byKey().get(entry.key());
            }
            // The statistics key names each level as envoy does: the configured wildcard, the request's
            // value where value_to_metric asks for it, or the key alone for a default descriptor.
            valueKey.append('.').append(entry.key());
            if (next != null) {
                String patternValue = wildcardKey == null ? null : stripPrefix(wildcardKey, entry.key() + "_");
                String value;
                if (wildcardKey != null && next.shareThreshold()) {
                    if (shared == null) {
                        shared = new String[entries.size()];
                    }
                    shared[i] = patternValue;
                    value = patternValue;
                } else if (wildcardKey != null) {
                    value = next.valueToMetric() ? entry.value() : patternValue;
                } else if (byValue) {
                    value = entry.value();
                } else {
                    value = next.valueToMetric() ? entry.value() : "";
                }
                if (!value.isEmpty()) {
                    valueKey.append('_').append(value);
                }
            }
            if (next != null && next.rateLimit() != null && i == entries.size() - 1) {
                found = next.rateLimit();
            }
            if (next == null || next.children().byKey().isEmpty()) {
                break;
            }
            level = next.children();
        }
        if (found == null) {
            return null;
        }
        String statsKey;
        if (found.detailedMetric() && shared != null) {
            // share_threshold keeps one statistic per wildcard even when detailed_metric asks for values.
            StringBuilder k = new StringBuilder(domain);
            for (int i = 0; i < entries.size(); i++) {
                Entry e = entries.get(i);
                k.append('.').append(e.key());
                String v = shared[i] != null ? shared[i] : e.value();
                if (!v.isEmpty()) {
                    k.append('_').append(v);
                }
            }
            statsKey = k.toString();
        } else if (found.detailedMetric()) {
            statsKey = detailedKey.toString();
        } else {
            statsKey = valueKey.toString();
        }
        return new Match(found, statsKey, shared == null ? null : Collections.unmodifiableList(
                Arrays.asList(shared)));
    }

    private static String stripPrefix(String text, String prefix) {
        return text.startsWith(prefix) ? text.substring(prefix.length()) : text;
    }
}
