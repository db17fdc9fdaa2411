/**
 * Every algorithm as one pure state transition: {@code (state, now, request) -> (state', verdict)}.
 *
 * <p>Not API: classes here are public only so the stores in other Sluice modules can run them. Each
 * algorithm class opens with a derivation essay (model, worked example, invariants, references) and is
 * ported line by line to one Lua script in {@code sluice-redis}. Arithmetic is integer microseconds and
 * integer counts, with every intermediate bounded so that IEEE doubles (Lua numbers) give the same result.
 */
package io.sluice.internal.algorithm;
