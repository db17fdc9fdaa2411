package io.sluice.spring.boot;

/**
 * Sluice's configuration cannot be used: the message names the property at fault and what was expected, e.g.
 * {@code sluice.web.routes[0].rule: no rule 'apo'; rules are [api, login]}. Thrown at start-up, so a bad
 * configuration stops the application instead of limiting the wrong thing.
 */
public class SluiceConfigurationException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String property;

    /**
     * @param property the property at fault, e.g. {@code sluice.rules[0]}
     * @param problem  what was expected, and what was found
     */
    public SluiceConfigurationException(String property, String problem) {
        this(property, problem, null);
    }

    public SluiceConfigurationException(String property, String problem, Throwable cause) {
        super(property + ": " + problem, cause);
        this.property = property;
    }

    /** The property at fault. */
    public String property() {
        return property;
    }
}
