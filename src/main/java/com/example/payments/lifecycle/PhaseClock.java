package com.example.payments.lifecycle;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.Tag;
import io.helidon.metrics.api.Timer;

/**
 * Times the phases of one shutdown: records each phase in {@code shutdown_duration_seconds{phase}} the moment it
 * ends (so a scrape during the metrics linger sees it), logs one line per phase with its duration, and knows the
 * phase running now, which the hard deadline names when it fires.
 */
final class PhaseClock {

    private static final System.Logger LOGGER = System.getLogger(ShutdownSequence.class.getName());
    // Seconds. Up to 2 minutes: past the longest terminationGracePeriodSeconds anyone should configure.
    private static final Duration[] BUCKETS = {
            Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(250), Duration.ofMillis(500),
            Duration.ofSeconds(1), Duration.ofMillis(2500), Duration.ofSeconds(5), Duration.ofSeconds(10),
            Duration.ofSeconds(15), Duration.ofSeconds(20), Duration.ofSeconds(30), Duration.ofSeconds(45),
            Duration.ofSeconds(60), Duration.ofSeconds(90), Duration.ofSeconds(120)};

    private final MeterRegistry meters;
    private final long signalNanos;
    private final Map<String, Long> durations = new LinkedHashMap<>();
    private volatile String current = "signal";

    /** The {@code phase} tag values, in order; {@code total} is from the signal to the end of cleanup. */
    static final List<String> PHASES = List.of("pre-drain", "drain", "key-release", "cleanup", "total");

    PhaseClock(MeterRegistry meters, long signalNanos) {
        this.meters = meters;
        this.signalNanos = signalNanos;
    }

    /** A phase body. */
    @FunctionalInterface
    interface Phase {
        void run() throws InterruptedException;
    }

    /**
     * Runs, times, records and logs one phase. A phase that fails with a bug (a runtime exception) is logged and the
     * sequence goes on: a half-finished shutdown that still closes its listeners beats one that hangs until SIGKILL.
     *
     * @param name the {@code phase} tag
     * @param body the phase
     * @throws InterruptedException when the sequence thread is interrupted
     */
    void run(String name, Phase body) throws InterruptedException {
        current = name;
        long start = System.nanoTime();
        try {
            body.run();
        } catch (RuntimeException e) {
            LOGGER.log(Level.ERROR, "Shutdown phase " + name + " failed; continuing with the next phase", e);
        } finally {
            long elapsed = System.nanoTime() - start;
            durations.put(name, elapsed);
            record(name, elapsed);
            LOGGER.log(Level.INFO, "Shutdown phase {0} done in {1,number,#} ms", name, millis(elapsed));
        }
    }

    /**
     * Records the {@code total} phase: from the signal to now.
     */
    void recordTotal() {
        long total = System.nanoTime() - signalNanos;
        durations.put("total", total);
        record("total", total);
    }

    /**
     * Marks a step that is not a timed phase, e.g. the metrics linger or the exit, for the hard deadline's log line.
     *
     * @param name the step
     */
    void enter(String name) {
        current = name;
    }

    /**
     * The phase or step running now.
     *
     * @return its name
     */
    String current() {
        return current;
    }

    /**
     * Every recorded phase with its duration, in order, e.g. {@code pre-drain=1001 ms, drain=2040 ms}.
     *
     * @return the summary text
     */
    String summary() {
        return durations.entrySet().stream()
                .map(e -> e.getKey() + "=" + millis(e.getValue()) + " ms")
                .collect(Collectors.joining(", "));
    }

    /**
     * Creates every phase's histogram at startup with count 0, so that rate() and increase() over a scrape series
     * see a shutdown (a series that appears only during the linger has no earlier sample to compare with).
     *
     * @param meters registry
     */
    static void registerPhases(MeterRegistry meters) {
        PHASES.forEach(phase -> timer(meters, phase));
    }

    private void record(String name, long nanos) {
        timer(meters, name).record(Duration.ofNanos(nanos));
    }

    private static Timer timer(MeterRegistry meters, String name) {
        return meters.getOrCreate(Timer.builder("shutdown_duration")
                                   .baseUnit(TimeUnit.SECONDS)
                                   .tags(List.of(Tag.create("phase", name)))
                                   .description("Duration of each shutdown phase; total is signal to end of cleanup")
                                   .percentiles(new double[0])
                                   .buckets(BUCKETS));
    }

    private static long millis(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }
}
