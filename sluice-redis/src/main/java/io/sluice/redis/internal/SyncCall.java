package io.sluice.redis.internal;

import io.sluice.internal.algorithm.SyncableAlgorithm;
import java.util.ArrayList;
import java.util.List;

/**
 * One call of the sync script ({@code sync.lua}, where the layout is documented) for one (rule, key) target: the
 * node's bucket totals per limit out, the shared states back.
 */
final class SyncCall {

    private SyncCall() {}

    /**
     * The call's keys and arguments.
     *
     * @param now        client time ("now,slackMillis"), or "" for Redis server time
     * @param admittedAt per limit, when each bucket began
     * @param totals     per limit, each bucket's total so far (parallel to {@code admittedAt})
     */
    static ScriptCall build(RedisRule rule, String[] stateKeys, String markerKey, String now, long[][] admittedAt,
                            long[][] totals) {
        int n = rule.size();
        String[] keys = new String[n + 1];
        System.arraycopy(stateKeys, 0, keys, 0, n);
        keys[n] = markerKey;
        List<String> args = new ArrayList<>(2 + 4 * n);
        args.add(now);
        args.add(Integer.toString(n));
        for (int i = 0; i < n; i++) {
            args.add(rule.algorithm(i));
            args.add(rule.fingerprint(i));
            args.add(rule.params(i));
            StringBuilder buckets = new StringBuilder();
            for (int b = 0; b < admittedAt[i].length; b++) {
                if (b > 0) {
                    buckets.append(' ');
                }
                buckets.append(admittedAt[i][b]).append(':').append(totals[i][b]);
            }
            args.add(buckets.toString());
        }
        for (int i = 0; i < n; i++) {
            String[] versions = rule.previous(i);
            for (int v = 0; v < versions.length; v += 2) {
                args.add(Integer.toString(i + 1));
                args.add(versions[v]);
                args.add(versions[v + 1]);
            }
        }
        return new ScriptCall(keys, args.toArray(new String[0]));
    }

    /** A reply: the script's now, and each limit's state after absorbing (null for none). */
    record Reply(long now, Object[] states) {}

    /** Reads a reply with the algorithms of the rule the call was built for. */
    static Reply parse(List<Object> reply, List<SyncableAlgorithm<Object>> algorithms) {
        if (reply == null || reply.size() != algorithms.size() + 1) {
            throw new IllegalStateException("the Sluice sync script replied " + reply + "; expected "
                    + (algorithms.size() + 1) + " fields");
        }
        Object[] states = new Object[algorithms.size()];
        for (int i = 0; i < states.length; i++) {
            String s = String.valueOf(reply.get(i + 1));
            if (!s.isEmpty()) {
                String[] words = s.split(",");
                long[] fields = new long[words.length];
                for (int f = 0; f < words.length; f++) {
                    fields[f] = Long.parseLong(words[f]);
                }
                states[i] = algorithms.get(i).state(fields);
            }
        }
        return new Reply(Long.parseLong(String.valueOf(reply.get(0))), states);
    }
}
