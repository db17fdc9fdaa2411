package io.sluice.testkit;

import io.sluice.Decision;
import io.sluice.Limit;
import io.sluice.RateLimiter;
import io.sluice.Rule;
import io.sluice.Store;

/**
 * What the store contract's cases ({@link TogetherCases}, {@link AlgorithmCases}, {@link RuleCases},
 * {@link CallerCases}) ask of the store under test. {@link StoreContract} supplies it, opening a fresh store on a
 * fresh {@link ManualClock} before each case and closing both after it.
 */
public interface ContractFixture {

    /** One millisecond and one second in the microseconds decisions report. */
    long MS = 1_000;
    long S = 1_000_000;

    /** The clock the store reads; the cases move it. */
    ManualClock clock();

    /** The store under test, opened for this case. */
    Store store();

    /** The rule a case runs: {@code limits} under {@code name}, in the mode the store under test runs. */
    Rule ruleUnderTest(String name, Limit... limits);

    /** A limiter on the store with a rule (see {@link #ruleUnderTest}) no other case uses, closed after the case. */
    RateLimiter limiter(Limit... limits);

    /** A limiter on the store for {@code rule} exactly as given (no mode applied), closed after the case. */
    RateLimiter limiterFor(Rule rule);

    /**
     * Asserts an admission that a store deciding exactly reports with {@code exactRemaining} permits left. The
     * cases that check remaining counts go through here, so that a mode reporting another count (leased mode: what
     * the node's lease still holds) states what its count does mean instead of skipping the case.
     */
    void assertAdmittedWithRemaining(Decision decision, long exactRemaining);

    /** Threads used by the concurrency cases. */
    int threads();
}
