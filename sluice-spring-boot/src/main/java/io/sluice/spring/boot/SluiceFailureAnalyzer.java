package io.sluice.spring.boot;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Turns a {@link SluiceConfigurationException} that stopped the application into Spring Boot's short
 * "APPLICATION FAILED TO START" report: the property and the problem, without the bean-creation stack.
 */
public class SluiceFailureAnalyzer extends AbstractFailureAnalyzer<SluiceConfigurationException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, SluiceConfigurationException cause) {
        return new FailureAnalysis("Sluice's configuration is invalid: " + cause.getMessage(),
                "Correct " + cause.property() + " (see docs/spring-boot.md for every sluice.* property).", cause);
    }
}
