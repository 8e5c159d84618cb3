package com.example.payments;

import java.lang.System.Logger.Level;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import com.example.payments.lifecycle.Signals;
import com.example.payments.logging.Logging;

/**
 * The load tests' naive contender: the service as a plain Helidon application would stop at SIGTERM, run side by side
 * with the graceful shutdown sequence ({@code load-tests/rolling-restart}, {@code ShutdownSignalsIT}). Test code: it
 * ships in the test-tools jar ({@code target/<artifact>-test-tools.jar}), never in the service's jar, so no
 * configuration can select it in production.
 * <pre>
 * java -cp target/payments-authorization.jar:target/payments-authorization-test-tools.jar \
 *     com.example.payments.NaiveShutdownMain
 * </pre>
 *
 * <p>Everything up to the signal is {@link Main}'s: the same configuration, checks, components and startup line. At
 * SIGTERM or SIGINT both listeners stop at once, as one server with two sockets would: no readiness flip, no
 * pre-drain, no drain of idle connections, nothing released or cleaned up; in-flight requests get Helidon's default
 * grace period of 0.5 s ({@link #GRACE_MS}), then the process exits with status 0. A second signal is logged and
 * ignored.
 */
public final class NaiveShutdownMain {

    static {
        // Before the first logger (this class's own, below), as in Main.
        Logging.bootstrap();
    }

    /** What in-flight requests get after the signal: Helidon's default shutdown grace period, 500 ms. */
    static final long GRACE_MS = 500;

    private static final System.Logger LOGGER = System.getLogger(NaiveShutdownMain.class.getName());

    private NaiveShutdownMain() {
    }

    /**
     * Starts the service as {@link Main#main} does, with the naive reaction to SIGTERM and SIGINT.
     *
     * @param args ignored; configure as the service ({@code -Dkey=value}, environment variables,
     *             {@code APP_CONFIG_FILE})
     */
    public static void main(String[] args) {
        CompletableFuture<Running> running = new CompletableFuture<>();
        AtomicBoolean stopping = new AtomicBoolean();
        // The handlers go in before startup completes (Main's rule); a signal before Main.launch returns waits for it.
        running.complete(Main.launch(sequence -> Signals.install(signal -> {
            if (stopping.compareAndSet(false, true)) {
                Thread.ofPlatform().name("naive-shutdown").daemon(false).start(() -> stop(signal, running.join()));
            } else {
                LOGGER.log(Level.INFO, "{0} received during the naive shutdown; ignored", signal);
            }
        })));
    }

    private static void stop(String signal, Running running) {
        LOGGER.log(Level.INFO, "{0} received: naive shutdown, stopping both listeners now", signal);
        // Both close their sockets at once; whatever is still running when the grace period ends dies with the process.
        Thread health = Thread.ofPlatform().name("health-listener-stop").daemon(true).start(running.health()::stop);
        Thread business = Thread.ofPlatform().name("business-listener-stop").daemon(true)
                .start(running.business()::stop);
        long start = System.nanoTime();
        long deadline = start + TimeUnit.MILLISECONDS.toNanos(GRACE_MS);
        try {
            business.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            health.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        LOGGER.log(Level.INFO, "Naive shutdown: listeners {0} after {1,number,#} ms; exiting with status 0",
                   business.isAlive() || health.isAlive() ? "still stopping at the end of the grace period" : "stopped",
                   TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
        Logging.stop();
        System.exit(0);
    }
}
