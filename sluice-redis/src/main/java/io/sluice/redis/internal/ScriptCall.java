package io.sluice.redis.internal;

import java.util.Arrays;

/**
 * The KEYS and ARGV of one call of the script (layout in {@code rule.lua} and docs/redis-script-protocol.md).
 *
 * @param keys state keys, then the request key when there is a request id
 * @param args the arguments, all strings
 */
public record ScriptCall(String[] keys, String[] args) {

    @Override
    public boolean equals(Object o) {
        return o instanceof ScriptCall c && Arrays.equals(keys, c.keys) && Arrays.equals(args, c.args);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(keys) * 31 + Arrays.hashCode(args);
    }

    @Override
    public String toString() {
        return "ScriptCall{keys=" + Arrays.toString(keys) + ", args=" + Arrays.toString(args) + "}";
    }
}
