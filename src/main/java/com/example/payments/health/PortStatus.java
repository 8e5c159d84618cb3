package com.example.payments.health;

/**
 * What the last loopback probe of the business port saw.
 */
public enum PortStatus {
    /** {@code GET /ping} answered 200. */
    SERVING,
    /** {@code GET /ping} answered 503: the listener accepted, parsed and answered, but sheds load. */
    SATURATED,
    /** No answer within {@code health.prober.timeout}: refused, reset or too slow. */
    NOT_RESPONDING;

    /**
     * Whether the listener answered at all.
     *
     * @return {@code true} for {@link #SERVING} and {@link #SATURATED}
     */
    public boolean answered() {
        return this != NOT_RESPONDING;
    }
}
