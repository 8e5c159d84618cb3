package com.example.payments.lifecycle;

import java.lang.System.Logger.Level;

import io.helidon.webserver.WebServer;

/**
 * {@code shutdown.mode: naive}: what a plain Helidon application does at the signal, kept only so that load tests can
 * show the difference side by side. Both listeners stop at once, as one server with two sockets would; no readiness
 * flip, no pre-drain, in-flight requests get Helidon's default grace period of 0.5 s, nothing is cleaned up.
 */
final class NaiveShutdown {

    private static final System.Logger LOGGER = System.getLogger(ShutdownSequence.class.getName());

    private NaiveShutdown() {
    }

    /**
     * Stops both listeners and exits with status 0.
     *
     * @param signal   the signal, for the log
     * @param business the business server
     * @param health   the health server
     * @param phases   the clock, for {@code shutdown_duration_seconds{phase="total"}} and the hard deadline
     */
    static void run(String signal, WebServer business, WebServer health, PhaseClock phases) {
        LOGGER.log(Level.INFO, "{0} received: shutdown.mode is naive, stopping both listeners now", signal);
        phases.enter("naive-stop");
        Thread healthStop = Thread.ofPlatform().name("health-listener-stop").start(health::stop);
        business.stop();
        try {
            healthStop.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        phases.recordTotal();
        ShutdownSequence.exit(phases, "Both listeners closed, " + phases.summary() + "; exiting with status 0");
    }
}
