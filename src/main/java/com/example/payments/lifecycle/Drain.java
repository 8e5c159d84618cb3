package com.example.payments.lifecycle;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import java.util.function.LongConsumer;

import io.helidon.webserver.WebServer;

/**
 * The drain phase: the business listener stops accepting connections, the requests in flight finish, bounded by
 * {@code shutdown.drain-timeout}, and nothing else is waited for.
 *
 * <p>What Helidon 4.5's {@code WebServer.stop()} does, which this relies on: it closes the server socket (new
 * connections are refused), closes idle keep-alive connections at once, lets every connection that is handling a
 * request finish that request and then closes it, and interrupts whatever still runs after
 * {@code shutdown-grace-period}, which {@code Main} sets to the drain timeout so that no request in flight is cut off
 * early. What it does not do: close a connection whose client is still sending its request head; {@code stop()} would
 * wait the whole grace period for it. So the drain closes those connections itself (there is nothing in flight on
 * them), waits on the in-flight request count, and then gives the listener a short grace to finish closing.
 * {@code stop()} runs on its own thread and the drain waits for it only until its own deadline.
 *
 * <p>Requests still in flight at the deadline are cut off: the listener interrupts them when its grace period (the
 * drain timeout, counted from {@code stop()}, just after the deadline was set) ends. They get the same short grace to
 * end, so that each one records its decision or releases its idempotency key itself: the key-release phase that
 * follows meets only the keys of requests that did not end within it, instead of releasing the key of a request that
 * is about to record its decision.
 */
final class Drain {

    /**
     * How long the listener may take to close its remaining connections once nothing is in flight, and how long
     * cut-off requests get to end after the deadline: 500 ms.
     */
    static final Duration CLOSE_GRACE = Duration.ofMillis(500);

    private static final System.Logger LOGGER = System.getLogger(ShutdownSequence.class.getName());

    private Drain() {
    }

    /**
     * Runs the drain.
     *
     * @param business      the business server
     * @param inFlight      its in-flight counter
     * @param closeHalfSent closes the connections still sending a request head and returns how many
     * @param timeout       {@code shutdown.drain-timeout}
     * @param started       told the deadline as the drain begins (requests use it to refuse work they could not
     *                      finish)
     * @return requests still in flight at the deadline (cut off), 0 when everything finished; returns at most
     *         {@link #CLOSE_GRACE} after the deadline
     * @throws InterruptedException when the sequence thread is interrupted
     */
    static int run(WebServer business, InFlightCountingFilter inFlight, IntSupplier closeHalfSent, Duration timeout,
                   LongConsumer started) throws InterruptedException {
        // Created now, when the drain begins: a deadline created at startup would have expired before the signal.
        long start = System.nanoTime();
        long deadline = start + timeout.toNanos();
        started.accept(deadline);
        int atStart = inFlight.count();
        Thread stopper = Thread.ofPlatform().name("business-listener-stop").daemon(true).start(business::stop);
        int halfSent = closeHalfSent.getAsInt();
        LOGGER.log(Level.INFO, "Shutdown phase drain: business listener stops accepting; {0,number,#} requests in "
                               + "flight, drain timeout {1,number,#} ms; {2,number,#} connections still sending a "
                               + "request head closed, not waited for", atStart, timeout.toMillis(), halfSent);
        // Woken by the last response, not polled: the drain ends when the last request does.
        int cutOff = inFlight.awaitIdle(deadline);
        // stop() returns once every connection handler has ended. Waiting for it as well covers a request whose
        // headers were read but which had not reached the counter yet when it dropped to zero.
        while (cutOff == 0 && stopper.isAlive() && !stopper.join(grace(deadline))) {
            if (inFlight.count() == 0) {
                break;
            }
            cutOff = inFlight.awaitIdle(deadline);
        }
        long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        if (cutOff > 0) {
            LOGGER.log(Level.WARNING, "Drain timeout of {0,number,#} ms reached with {1,number,#} requests still in "
                                      + "flight; they are cut off", timeout.toMillis(), cutOff);
            int running = inFlight.awaitIdle(System.nanoTime() + CLOSE_GRACE.toNanos());
            LOGGER.log(Level.INFO, "Drain: {0,number,#} cut-off requests still in flight after a grace of up to "
                                   + "{1,number,#} ms for them to end; the idempotency keys still held are released "
                                   + "next", running, CLOSE_GRACE.toMillis());
            return cutOff;
        }
        LOGGER.log(Level.INFO, "Drain: waited {0,number,#} ms for {1,number,#} requests in flight at its start{2}",
                   waited, atStart, stopper.isAlive()
                           ? "; the business listener is still closing idle connections, not waited for"
                           : "; the business listener is closed");
        return 0;
    }

    private static Duration grace(long deadline) {
        long left = Math.max(1, deadline - System.nanoTime());
        return Duration.ofNanos(Math.min(left, CLOSE_GRACE.toNanos()));
    }
}
