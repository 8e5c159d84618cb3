package com.example.payments;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.example.payments.health.HealthState;
import com.example.payments.lifecycle.PeriodicWorker;
import com.example.payments.lifecycle.ShutdownSequence;

import io.helidon.metrics.api.MeterRegistry;
import io.helidon.webserver.WebServer;

/**
 * The running service, as {@link Main#start} returns it: both listeners, the health flags, the SIGTERM sequence, and
 * what that sequence stops and closes; {@link #stopForTests()} is the in-JVM tests' way to stop it without the
 * sequence (which ends the process).
 *
 * @param business  business server
 * @param health    health server
 * @param state     health flags
 * @param shutdown  the SIGTERM sequence
 * @param meters    metrics registry
 * @param resources the resources the shutdown sequence closes in its cleanup phase, by name, in registration
 *                  order; {@link #stopForTests()} closes the same ones
 * @param listenerHelpers not in the cleanup phase: the loopback prober (the sequence closes it when the drain
 *                  begins) and the request-deadline watchers (they end with the process); {@link #stopForTests()}
 *                  closes them first
 * @param workers   the background workers (sweeper, expiry, reconciler); the shutdown sequence stops them in its
 *                  cleanup phase, {@link #stopForTests()} before it closes the resources they use
 */
record Running(WebServer business, WebServer health, HealthState state, ShutdownSequence shutdown,
               MeterRegistry meters, Map<String, AutoCloseable> resources, List<AutoCloseable> listenerHelpers,
               List<PeriodicWorker> workers) {

    /** How long {@link #stopForTests()} waits for the background workers to end. */
    private static final Duration WORKER_STOP_TIMEOUT = Duration.ofSeconds(5);

    /**
     * Stops both listeners, closes resources and removes every meter, without the shutdown sequence (in-JVM tests
     * only: the next instance in the same JVM registers its own gauges). Waits at most 5 s for the workers to end;
     * a resource that fails to close is ignored.
     */
    void stopForTests() {
        business.stop();
        health.stop();
        // Workers first: one left running would use closed resources and, the tracer being process-wide, export
        // its spans into the next service started in the same JVM.
        workers.forEach(PeriodicWorker::requestStop);
        long deadline = System.nanoTime() + WORKER_STOP_TIMEOUT.toNanos();
        for (PeriodicWorker worker : workers) {
            try {
                worker.awaitStop(deadline);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        meters.meters().forEach(meters::remove);
        List<AutoCloseable> all = new ArrayList<>(listenerHelpers);
        all.addAll(resources.values());
        for (AutoCloseable resource : all) {
            try {
                resource.close();
            } catch (Exception ignored) {
                // best effort in tests
            }
        }
    }
}
