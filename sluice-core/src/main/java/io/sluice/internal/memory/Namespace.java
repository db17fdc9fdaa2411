package io.sluice.internal.memory;

import io.sluice.internal.CompiledRule;
import java.util.concurrent.ConcurrentHashMap;

/** The keys of one rule name and the latest compiled version of that rule. */
final class Namespace {
    final ConcurrentHashMap<String, Holder> keys = new ConcurrentHashMap<>();
    volatile CompiledRule compiled;

    Namespace(CompiledRule compiled) {
        this.compiled = compiled;
    }
}
