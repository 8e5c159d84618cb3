/**
 * Logging on Log4j 2: set up before the first logger, configured once the configuration is read, stopped last in the
 * shutdown sequence; Helidon's MDC kept in Log4j's thread context; {@code System.out} as a logger.
 */
package com.example.payments.logging;
