package internal;

/** Must not compile: io.sluice.internal is exported to io.sluice.redis only. */
public class Reach {
    static final Class<?> EVALUATOR = io.sluice.internal.RuleEvaluator.class;
}
