package com.example.payments.http;

import java.time.Duration;

import com.example.payments.config.ConfigValues;
import com.example.payments.config.ConfigurationException;

/**
 * Validated limits of the two listeners against slow, idle and too many clients (docs/hostile-clients.md).
 *
 * @param headerTimeout {@code http.header-timeout}, default PT5S: longest time from the end of a request line to the
 *                      end of its header section, on both listeners; then the connection is closed
 * @param bodyTimeout   {@code http.body-timeout}, default PT10S: longest time from the end of the header section to
 *                      the end of the body (business listener; the health listener takes no body); then the
 *                      connection is closed and the request counted as 408
 * @param business      the business listener's ({@code server.*})
 * @param health        the health listener's ({@code health-server.*})
 */
public record HttpSettings(Duration headerTimeout, Duration bodyTimeout, ListenerLimits business,
                           ListenerLimits health) {

    /** Largest {@code max-tcp-connections} accepted: far above what one JVM's heap and file descriptors carry. */
    static final long MAX_CONNECTIONS = 1_000_000;

    /**
     * Connection limits of one listener, Helidon's own settings of its config node, which this service requires to be
     * set and bounded.
     *
     * @param maxTcpConnections     {@code max-tcp-connections}: connections held at once; beyond it new connections
     *                              wait in the kernel's accept queue until one closes (Helidon's default is unlimited,
     *                              which lets a flood exhaust the file descriptors and kill the listener)
     * @param idleConnectionTimeout {@code idle-connection-timeout}: a connection with no request for this long is
     *                              closed (also the bound on a client trickling its request line)
     * @param idleConnectionPeriod  {@code idle-connection-period}: how often idle connections are looked for, so a
     *                              connection may stay idle up to timeout + period
     */
    public record ListenerLimits(int maxTcpConnections, Duration idleConnectionTimeout,
                                 Duration idleConnectionPeriod) {

        static ListenerLimits create(ConfigValues values, String node, int connections, Duration idleTimeout,
                                     Duration idlePeriod) {
            return new ListenerLimits(
                    (int) values.longInRange(node + ".max-tcp-connections", connections, 1, MAX_CONNECTIONS),
                    values.positiveDuration(node + ".idle-connection-timeout", idleTimeout),
                    values.positiveDuration(node + ".idle-connection-period", idlePeriod));
        }

        /**
         * How long an idle connection may hold a connection slot at most.
         *
         * @return idle connection timeout + period
         */
        public Duration longestIdle() {
            return idleConnectionTimeout.plus(idleConnectionPeriod);
        }
    }

    /**
     * Reads and validates the settings.
     *
     * @param values config reader
     * @return settings
     * @throws ConfigurationException naming the key when a value is unparsable or out of range
     */
    public static HttpSettings create(ConfigValues values) {
        return new HttpSettings(
                values.positiveDuration("http.header-timeout", Duration.ofSeconds(5)),
                values.positiveDuration("http.body-timeout", Duration.ofSeconds(10)),
                ListenerLimits.create(values, "server", 1000, Duration.ofSeconds(65), Duration.ofSeconds(5)),
                ListenerLimits.create(values, "health-server", 32, Duration.ofSeconds(10), Duration.ofSeconds(2)));
    }
}
