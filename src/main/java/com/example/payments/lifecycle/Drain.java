package com.example.payments.lifecycle;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.function.LongConsumer;

import io.helidon.webserver.WebServer;

/**
 * The drain phase: the business listener stops accepting connections and the requests in flight finish, bounded by
 * {@code shutdown.drain-timeout}.
 *
 * <p>What Helidon 4.5's {@code WebServer.stop()} does, which this relies on: it closes the server socket (new
 * connections are refused), closes idle keep-alive connections at once, lets every connection that is handling a
 * request finish that request and then closes it, and interrupts whatever still runs after
 * {@code shutdown-grace-period}, which {@code Main} sets to the drain timeout. {@code stop()} may wait up to twice
 * its grace period, so it runs on its own thread and the drain waits for it only until its own deadline.
 */
final class Drain {

    private static final System.Logger LOGGER = System.getLogger(ShutdownSequence.class.getName());

    private Drain() {
    }

    /**
     * Runs the drain.
     *
     * @param business the business server
     * @param inFlight its in-flight counter
     * @param timeout  {@code shutdown.drain-timeout}
     * @param started  told the deadline as the drain begins (requests use it to refuse work they could not finish)
     * @return requests still in flight at the deadline (cut off), 0 when everything finished
     * @throws InterruptedException when the sequence thread is interrupted
     */
    static int run(WebServer business, InFlightRequests inFlight, Duration timeout, LongConsumer started)
            throws InterruptedException {
        // Created now, when the drain begins: a deadline created at startup would have expired before the signal.
        long deadline = System.nanoTime() + timeout.toNanos();
        started.accept(deadline);
        LOGGER.log(Level.INFO, "Shutdown phase drain: business listener stops accepting; {0,number,#} requests in "
                               + "flight, drain timeout {1,number,#} ms", inFlight.count(), timeout.toMillis());
        Thread stopper = Thread.ofPlatform().name("business-listener-stop").daemon(true).start(business::stop);
        // Woken by the last response, not polled: the drain ends when the last request does.
        inFlight.awaitIdle(deadline);
        // stop() returns once every connection handler has ended. Waiting for it as well covers a request whose
        // headers were read but which had not reached the counter yet when it dropped to zero.
        long left = deadline - System.nanoTime();
        if (left > 0) {
            stopper.join(Duration.ofNanos(left));
        }
        if (!stopper.isAlive()) {
            return 0;
        }
        int cutOff = inFlight.count();
        LOGGER.log(Level.WARNING, "Drain timeout of {0,number,#} ms reached with {1,number,#} requests still in flight "
                                  + "and the business listener still closing connections; they are cut off",
                   timeout.toMillis(), cutOff);
        return cutOff;
    }
}
