package com.example.payments.lifecycle;

import java.lang.System.Logger.Level;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntSupplier;

import com.example.payments.health.HealthState;
import com.example.payments.idempotency.IdempotencyRegistry;
import com.example.payments.logging.Logging;

import io.helidon.metrics.api.MeterRegistry;
import io.helidon.webserver.WebServer;

/**
 * The SIGTERM choreography, owned by {@code Main} alone (both servers run with
 * {@code shutdown-hook: false}):
 * <ol>
 *     <li>{@code draining = true}, the first statement: readiness answers 503, liveness stays 200, and requests whose
 *     issuer call could not finish before the drain deadline are no longer claimed;</li>
 *     <li>pre-drain delay: the business port serves normally, closing each connection after its response, while
 *     load balancers de-register the pod;</li>
 *     <li>drain: the business listener stops accepting; in-flight requests finish, bounded by the drain timeout; idle
 *     connections and connections still sending a request head are closed, not waited for;</li>
 *     <li>idempotency keys still held by cut-off requests are released (the summary counts every release since the
 *     signal, the cut-off requests' own included);</li>
 *     <li>workers stopped and resources closed, bounded by the cleanup timeout;</li>
 *     <li>each phase's duration recorded in {@code shutdown_duration_seconds{phase}} as it ends, then one summary
 *     log line;</li>
 *     <li>the health listener stays up for the metrics linger, then closes;</li>
 *     <li>logs flushed and logging stopped, the very last step (Log4j's own shutdown hook is off); exit status
 *     0.</li>
 * </ol>
 * Every deadline is created when the phase it bounds begins (a deadline created at startup would have expired
 * long before the signal). Nothing interrupts an in-flight request before the drain timeout. The hard deadline,
 * created at the signal, halts the process with status 1 and names the phase that hung.
 *
 * <p>The phases above run in order here, one method each; {@link ShutdownSequenceBuilder} collects the parts.
 */
public final class ShutdownSequence {

    private static final System.Logger LOGGER = System.getLogger(ShutdownSequence.class.getName());

    private final ShutdownSettings settings;
    private final HealthState state;
    private final WebServer business;
    private final WebServer health;
    private final InFlightCountingFilter inFlight;
    private final IntSupplier closeHalfSent;
    private final IdempotencyRegistry registry;
    private final List<PeriodicWorker> workers;
    private final List<Map.Entry<String, AutoCloseable>> atDrain;
    private final List<Map.Entry<String, AutoCloseable>> resources;
    private final MeterRegistry meters;
    private final AtomicBoolean started = new AtomicBoolean();
    private volatile PhaseClock clock;

    // Through ShutdownSequenceBuilder#build: the required parts checked here, the lists copied.
    ShutdownSequence(ShutdownSequenceBuilder builder) {
        this.settings = Objects.requireNonNull(builder.settings, "settings");
        this.state = Objects.requireNonNull(builder.state, "state");
        this.business = Objects.requireNonNull(builder.business, "business server");
        this.health = Objects.requireNonNull(builder.health, "health server");
        this.inFlight = Objects.requireNonNull(builder.inFlight, "inFlight");
        this.closeHalfSent = builder.closeHalfSent;
        this.registry = Objects.requireNonNull(builder.registry, "registry");
        this.meters = Objects.requireNonNull(builder.meters, "meters");
        this.workers = List.copyOf(builder.workers);
        this.atDrain = List.copyOf(builder.atDrain);
        this.resources = List.copyOf(builder.resources);
        PhaseClock.registerPhases(meters);
    }

    /**
     * A builder; settings, state, servers, in-flight counter, registry and meters are required.
     *
     * @return builder
     */
    public static ShutdownSequenceBuilder builder() {
        return new ShutdownSequenceBuilder();
    }

    /**
     * Starts the sequence on a new non-daemon platform thread and returns at once (it runs on the JVM's signal
     * dispatcher thread). Only the first call starts it; a later signal is logged and ignored, so it can neither
     * restart nor corrupt the sequence.
     *
     * @param signal what triggered it, e.g. {@code SIGTERM}, for the log
     */
    public void begin(String signal) {
        long signalNanos = System.nanoTime();
        if (!started.compareAndSet(false, true)) {
            PhaseClock running = clock;
            LOGGER.log(Level.INFO, "{0} received during the shutdown sequence (phase {1}); ignored", signal,
                       running == null ? "signal" : running.current());
            return;
        }
        // First, before even the sequence thread exists: every readiness probe from here on answers 503, and no
        // request starts work it could not finish before the drain deadline.
        state.startDraining(signalNanos + settings.preDrainDelay().plus(settings.drainTimeout()).toNanos());
        PhaseClock phases = new PhaseClock(meters, signalNanos);
        clock = phases;
        HardDeadline.arm(signalNanos + settings.hardDeadline().toNanos(), settings.hardDeadline(), phases::current);
        // Non-daemon and platform: a thread started from a request handler would inherit daemon=true from its
        // virtual thread, and the JVM would exit the moment the listeners close, cutting the sequence short.
        Thread.ofPlatform().name("shutdown-sequence").daemon(false).start(() -> run(signal, phases));
    }

    private void run(String signal, PhaseClock phases) {
        LOGGER.log(Level.INFO, "{0} received: draining, readiness answers 503; pre-drain delay {1,number,#} ms "
                               + "(each response closes its connection), drain timeout {2,number,#} ms, cleanup "
                               + "timeout {3,number,#} ms, metrics linger {4,number,#} ms, hard deadline {5,number,#} ms",
                   signal, settings.preDrainDelay().toMillis(), settings.drainTimeout().toMillis(),
                   settings.cleanupTimeout().toMillis(), settings.metricsLinger().toMillis(),
                   settings.hardDeadline().toMillis());
        try {
            runPhases(phases);
            phases.enter("metrics-linger");
            TimeUnit.NANOSECONDS.sleep(settings.metricsLinger().toNanos());
        } catch (InterruptedException e) {
            LOGGER.log(Level.WARNING, "Shutdown sequence interrupted in phase {0}; closing now", phases.current());
        }
        phases.enter("health-listener-close");
        health.stop();
        exit(phases, "Health listener closed; exiting with status 0");
    }

    private void runPhases(PhaseClock phases) throws InterruptedException {
        Outcome outcome = new Outcome();
        long releasedBefore = registry.releasedCount();
        phases.run("pre-drain", () -> TimeUnit.NANOSECONDS.sleep(settings.preDrainDelay().toNanos()));
        phases.run("drain", () -> {
            // Probes of the port the drain closes would only log failures from here on.
            atDrain.forEach(resource -> Cleanup.closeQuietly(resource.getKey(), resource.getValue()));
            outcome.cutOff = Drain.run(business, inFlight, closeHalfSent, settings.drainTimeout(),
                                       state::drainStarted);
        });
        phases.run("key-release", () -> {
            LOGGER.log(Level.INFO, "Shutdown phase key-release: {0,number,#} idempotency keys still held IN_FLIGHT",
                       registry.heldCount());
            registry.releaseAllHeld(IdempotencyRegistry.ReleaseReason.SHUTDOWN);
        });
        // Every release since the signal, whoever made it: a cut-off request's own, or this phase's.
        outcome.released = registry.releasedCount() - releasedBefore;
        phases.run("cleanup", () -> outcome.abandoned = Cleanup.run(workers, resources, settings.cleanupTimeout()));
        phases.recordTotal();
        LOGGER.log(Level.INFO, "Shutdown summary: {0}; requests cut off by the drain timeout: {1,number,#}; "
                               + "idempotency keys released: {2,number,#}; abandoned at the cleanup timeout: {3}",
                   phases.summary(), outcome.cutOff, outcome.released,
                   outcome.abandoned.isEmpty() ? "none" : String.join(", ", outcome.abandoned));
    }

    // The last step: logs the last line, writes every line still queued and stops logging (at most 2 s), and exits
    // with status 0; the clock is told that JVM shutdown hooks run from here on (the hard deadline still guards them).
    private static void exit(PhaseClock phases, String message) {
        LOGGER.log(Level.INFO, message);
        phases.enter("exit");
        Logging.stop();
        System.exit(0);
    }

    private static final class Outcome {
        private int cutOff;
        private long released;
        private List<String> abandoned = List.of();
    }
}
