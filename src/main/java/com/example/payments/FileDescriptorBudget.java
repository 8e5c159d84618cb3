package com.example.payments;

import java.lang.management.ManagementFactory;

import com.example.payments.config.ConfigurationException;
import com.example.payments.http.HttpSettings;

import com.sun.management.UnixOperatingSystemMXBean;

/**
 * The startup check that both listeners' connection caps fit the process's file descriptor limit
 * ({@code ulimit -n}).
 */
final class FileDescriptorBudget {

    /**
     * File descriptors kept free beyond both connection caps and what the process holds at startup: the Redis
     * connections (one plus a pool of 16 for {@code WAIT}), the loopback prober's client socket, log files.
     */
    static final int SPARE_FILE_DESCRIPTORS = 64;

    private FileDescriptorBudget() {
    }

    /**
     * Fails when both connection caps, with what the process holds now and some spare, do not fit the process's file
     * descriptor limit ({@code ulimit -n}): a listener whose {@code accept} hits that limit in Helidon 4.5 stops for
     * good while the JVM keeps running. Below the cap, Helidon does not even call {@code accept}.
     *
     * @param http the connection caps
     * @throws ConfigurationException naming {@code server.max-tcp-connections} when they do not fit
     */
    static void require(HttpSettings http) {
        if (!(ManagementFactory.getOperatingSystemMXBean() instanceof UnixOperatingSystemMXBean os)) {
            return;
        }
        long limit = os.getMaxFileDescriptorCount();
        long open = os.getOpenFileDescriptorCount();
        // The health listener's Helidon cap is a multiple of its own (see ListenerBounds.bounded).
        long health = (long) ListenerBounds.HEALTH_CEILING * http.health().maxTcpConnections();
        long room = limit - open - SPARE_FILE_DESCRIPTORS - health;
        if (http.business().maxTcpConnections() > room) {
            throw new ConfigurationException("server.max-tcp-connections", "'" + http.business().maxTcpConnections()
                    + "' is out of range; allowed: an integer from 1 to " + Math.max(0, room) + ": the file descriptor "
                    + "limit (ulimit -n) is " + limit + ", of which " + open + " are open, "
                    + health + " are for the health listener (" + ListenerBounds.HEALTH_CEILING
                    + " x health-server.max-tcp-connections) and "
                    + SPARE_FILE_DESCRIPTORS + " are kept for outgoing connections");
        }
    }
}
