package com.example.payments.lifecycle;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;

import com.example.payments.health.HealthState;
import com.example.payments.idempotency.IdempotencyRegistry;

import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.Tag;
import io.helidon.metrics.api.Timer;
import io.helidon.webserver.WebServer;

/**
 * The SIGTERM choreography (DESIGN §4), owned by {@code Main} alone (both servers run with
 * {@code shutdown-hook: false}):
 * <ol>
 *     <li>{@code draining = true}, the first statement: readiness answers 503, liveness stays 200;</li>
 *     <li>pre-drain delay: the business port serves normally, closing each connection after its response, while
 *     load balancers de-register the pod;</li>
 *     <li>drain: the business listener stops accepting; in-flight requests finish, bounded by the drain timeout;</li>
 *     <li>idempotency keys still held by cut-off requests are released;</li>
 *     <li>workers stopped and resources closed, bounded by the cleanup timeout;</li>
 *     <li>each phase's duration recorded in {@code shutdown_duration_seconds{phase}} as it ends, then one summary
 *     log line;</li>
 *     <li>the health listener stays up for the metrics linger, then closes;</li>
 *     <li>logs flushed; exit status 0.</li>
 * </ol>
 * Every deadline is created when the phase it bounds begins (a deadline created at startup would have expired
 * long before the signal). Nothing interrupts an in-flight request before the drain timeout. The hard deadline,
 * created at the signal, halts the process with status 1 and names the phase that hung.
 */
public final class ShutdownSequence {

    private static final System.Logger LOGGER = System.getLogger(ShutdownSequence.class.getName());

    private final ShutdownSettings settings;
    private final HealthState state;
    private final WebServer business;
    private final WebServer health;
    private final InFlightRequests inFlight;
    private final IdempotencyRegistry registry;
    private final List<PeriodicWorker> workers;
    private final Map<String, AutoCloseable> resources;
    private final MeterRegistry meters;
    private final AtomicBoolean started = new AtomicBoolean();
    private volatile String phase = "signal";

    private ShutdownSequence(Builder builder) {
        this.settings = builder.settings;
        this.state = builder.state;
        this.business = builder.business;
        this.health = builder.health;
        this.inFlight = builder.inFlight;
        this.registry = builder.registry;
        this.workers = List.copyOf(builder.workers);
        this.resources = new LinkedHashMap<>(builder.resources);
        this.meters = builder.meters;
    }

    /**
     * A builder; every setter is required.
     *
     * @return builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Starts the sequence on a new non-daemon platform thread and returns at once. Only the first call starts it; a
     * second signal during the sequence is logged and ignored, so it can neither restart nor corrupt it.
     *
     * @param signal what triggered it, e.g. {@code SIGTERM}, for the log
     */
    public void begin(String signal) {
        long signalNanos = System.nanoTime();
        if (!started.compareAndSet(false, true)) {
            LOGGER.log(Level.INFO, "{0} received while shutting down (phase {1}); ignored", signal, phase);
            return;
        }
        // Non-daemon and platform: a thread started from a request handler would inherit daemon=true from its
        // virtual thread, and the JVM would exit the moment the listeners close, cutting the sequence short.
        Thread thread = Thread.ofPlatform().name("shutdown-sequence").daemon(false)
                .unstarted(() -> run(signal, signalNanos));
        thread.start();
    }

    private void run(String signal, long signalNanos) {
        state.startDraining();
        HardDeadline.arm(signalNanos + settings.hardDeadline().toNanos(), settings.hardDeadline(), () -> phase);
        if (settings.mode() == ShutdownSettings.Mode.NAIVE) {
            runNaive(signal);
            return;
        }
        LOGGER.log(Level.INFO, "{0} received: draining, readiness now answers 503; pre-drain delay {1,number,#} ms, drain "
                               + "timeout {2,number,#} ms, cleanup timeout {3,number,#} ms, metrics linger {4,number,#} ms, hard deadline {5,number,#} ms",
                   signal, millis(settings.preDrainDelay()), millis(settings.drainTimeout()),
                   millis(settings.cleanupTimeout()), millis(settings.metricsLinger()), millis(settings.hardDeadline()));
        Map<String, Long> durations = new LinkedHashMap<>();
        try {
            durations.put("pre-drain", timed("pre-drain", this::preDrain));
            int[] cutOff = new int[1];
            durations.put("drain", timed("drain", () -> cutOff[0] = drain()));
            int[] released = new int[1];
            durations.put("key-release", timed("key-release",
                    () -> released[0] = registry.releaseAllHeld(IdempotencyRegistry.ReleaseReason.SHUTDOWN)));
            durations.put("cleanup", timed("cleanup", this::cleanup));
            long total = System.nanoTime() - signalNanos;
            record("total", total);
            durations.put("total", total);
            LOGGER.log(Level.INFO, "Shutdown summary: {0}; requests cut off by the drain timeout: {1,number,#}; idempotency "
                                   + "keys released: {2,number,#}", format(durations), cutOff[0], released[0]);
            phase = "metrics-linger";
            TimeUnit.NANOSECONDS.sleep(settings.metricsLinger().toNanos());
        } catch (InterruptedException e) {
            LOGGER.log(Level.WARNING, "Shutdown sequence interrupted in phase {0}; closing now", phase);
        }
        phase = "health-listener-close";
        health.stop();
        LOGGER.log(Level.INFO, "Health listener closed; exiting with status 0");
        Logs.flush();
        System.exit(0);
    }

    private void preDrain() throws InterruptedException {
        TimeUnit.NANOSECONDS.sleep(settings.preDrainDelay().toNanos());
    }

    private int drain() throws InterruptedException {
        long deadline = System.nanoTime() + settings.drainTimeout().toNanos();
        LOGGER.log(Level.INFO, "Drain: business listener stops accepting; {0,number,#} requests in flight",
                   inFlight.count());
        // stop() closes the server socket and idle connections, then waits for handlers (its grace period is the
        // drain timeout). It runs beside us so that the drain ends when the last request does, not when stop() does.
        Thread stopper = Thread.ofPlatform().name("business-listener-stop").daemon(true).start(business::stop);
        int remaining = inFlight.awaitIdle(deadline);
        long left = deadline - System.nanoTime();
        if (left > 0) {
            stopper.join(Duration.ofNanos(left));
        }
        if (remaining > 0) {
            LOGGER.log(Level.WARNING, "Drain timeout of {0,number,#} ms reached with {1,number,#} requests still in flight; they are "
                                      + "cut off", millis(settings.drainTimeout()), remaining);
        }
        return remaining;
    }

    private void cleanup() throws InterruptedException {
        long deadline = System.nanoTime() + settings.cleanupTimeout().toNanos();
        for (PeriodicWorker worker : workers) {
            if (!worker.stop(deadline)) {
                LOGGER.log(Level.WARNING, "Worker {0} did not stop within the cleanup timeout", worker.name());
            }
        }
        List<Thread> closing = new ArrayList<>();
        for (Map.Entry<String, AutoCloseable> resource : resources.entrySet()) {
            closing.add(Thread.ofVirtual().name("close-" + resource.getKey()).start(() -> close(resource)));
        }
        for (Thread thread : closing) {
            long left = deadline - System.nanoTime();
            if (left > 0) {
                thread.join(Duration.ofNanos(left));
            }
            if (thread.isAlive()) {
                LOGGER.log(Level.WARNING, "{0} did not finish within the cleanup timeout of {1,number,#} ms",
                           thread.getName(), millis(settings.cleanupTimeout()));
            }
        }
    }

    private static void close(Map.Entry<String, AutoCloseable> resource) {
        try {
            resource.getValue().close();
        } catch (Exception e) {
            LOGGER.log(Level.WARNING, "Closing " + resource.getKey() + " failed", e);
        }
    }

    private void runNaive(String signal) {
        LOGGER.log(Level.INFO, "{0} received: shutdown.mode is naive, stopping both listeners now", signal);
        phase = "naive-stop";
        business.stop();
        health.stop();
        Logs.flush();
        System.exit(0);
    }

    private long timed(String name, Phase body) throws InterruptedException {
        phase = name;
        long start = System.nanoTime();
        long elapsed;
        try {
            body.run();
        } finally {
            elapsed = System.nanoTime() - start;
            record(name, elapsed);
            LOGGER.log(Level.INFO, "Shutdown phase {0} done in {1,number,#} ms", name, TimeUnit.NANOSECONDS.toMillis(elapsed));
        }
        return elapsed;
    }

    private void record(String name, long nanos) {
        meters.getOrCreate(Timer.builder("shutdown_duration")
                                   .baseUnit(TimeUnit.SECONDS)
                                   .tags(List.of(Tag.create("phase", name)))
                                   .description("Duration of each shutdown phase; total is signal to end of cleanup")
                                   .percentiles(new double[0])
                                   .buckets(BUCKETS))
                .record(Duration.ofNanos(nanos));
    }

    private static final Duration[] BUCKETS = {
            Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(250), Duration.ofMillis(500),
            Duration.ofSeconds(1), Duration.ofMillis(2500), Duration.ofSeconds(5), Duration.ofSeconds(10),
            Duration.ofSeconds(15), Duration.ofSeconds(20), Duration.ofSeconds(30), Duration.ofSeconds(45),
            Duration.ofSeconds(60), Duration.ofSeconds(90), Duration.ofSeconds(120)};

    private static String format(Map<String, Long> durations) {
        return durations.entrySet().stream()
                .map(e -> e.getKey() + "=" + TimeUnit.NANOSECONDS.toMillis(e.getValue()) + " ms")
                .collect(Collectors.joining(", "));
    }

    private static long millis(Duration duration) {
        return duration.toMillis();
    }

    @FunctionalInterface
    private interface Phase {
        void run() throws InterruptedException;
    }

    /** Builder of {@link ShutdownSequence}. */
    public static final class Builder {
        private ShutdownSettings settings;
        private HealthState state;
        private WebServer business;
        private WebServer health;
        private InFlightRequests inFlight;
        private IdempotencyRegistry registry;
        private final List<PeriodicWorker> workers = new ArrayList<>();
        private final Map<String, AutoCloseable> resources = new LinkedHashMap<>();
        private MeterRegistry meters;

        private Builder() {
        }

        /**
         * @param settings {@code shutdown.*}
         * @return this builder
         */
        public Builder settings(ShutdownSettings settings) {
            this.settings = settings;
            return this;
        }

        /**
         * @param state where draining is set
         * @return this builder
         */
        public Builder state(HealthState state) {
            this.state = state;
            return this;
        }

        /**
         * @param business the business server (drained)
         * @param health   the health server (closed last)
         * @return this builder
         */
        public Builder servers(WebServer business, WebServer health) {
            this.business = business;
            this.health = health;
            return this;
        }

        /**
         * @param inFlight the business listener's in-flight counter
         * @return this builder
         */
        public Builder inFlight(InFlightRequests inFlight) {
            this.inFlight = inFlight;
            return this;
        }

        /**
         * @param registry idempotency registry whose held keys are released after the drain
         * @return this builder
         */
        public Builder registry(IdempotencyRegistry registry) {
            this.registry = registry;
            return this;
        }

        /**
         * @param worker a background worker stopped in the cleanup phase
         * @return this builder
         */
        public Builder addWorker(PeriodicWorker worker) {
            workers.add(worker);
            return this;
        }

        /**
         * @param name     name for the log
         * @param resource closed in the cleanup phase, in parallel with the others
         * @return this builder
         */
        public Builder addResource(String name, AutoCloseable resource) {
            resources.put(name, resource);
            return this;
        }

        /**
         * @param meters where {@code shutdown_duration_seconds} goes
         * @return this builder
         */
        public Builder meters(MeterRegistry meters) {
            this.meters = meters;
            return this;
        }

        /**
         * Builds the sequence.
         *
         * @return the sequence
         */
        public ShutdownSequence build() {
            return new ShutdownSequence(this);
        }
    }
}
