package com.example.payments.health;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.helidon.metrics.api.Gauge;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.Tag;

/**
 * Compares each registered worker's {@link Heartbeat} with its staleness threshold. Liveness asks it on every probe;
 * the comparison is a few atomic reads, so liveness stays free of I/O. While draining, liveness does not ask at all:
 * workers are being stopped on purpose.
 */
public final class WorkerWatchdog {

    private final List<Heartbeat> heartbeats = new CopyOnWriteArrayList<>();
    private final MeterRegistry meters;

    /**
     * Creates a watchdog.
     *
     * @param meters where {@code worker_heartbeat_age_seconds{worker}} goes
     */
    public WorkerWatchdog(MeterRegistry meters) {
        this.meters = meters;
    }

    /**
     * Watches a worker from now on and exports the age of its heartbeat.
     *
     * @param heartbeat the worker's heartbeat
     */
    public void watch(Heartbeat heartbeat) {
        heartbeats.add(heartbeat);
        meters.getOrCreate(Gauge.builder("worker_heartbeat_age_seconds", heartbeat, Heartbeat::ageSeconds)
                                   .tags(List.of(Tag.create("worker", heartbeat.worker())))
                                   .description("Seconds since the worker's loop last touched its heartbeat"));
    }

    /**
     * The watched heartbeats.
     *
     * @return immutable snapshot
     */
    public List<Heartbeat> heartbeats() {
        return List.copyOf(heartbeats);
    }

    /**
     * One error per stale worker.
     *
     * @return e.g. {@code ["idempotency-sweeper: no heartbeat for 12 s"]}; empty when all are fresh
     */
    public List<String> errors() {
        return heartbeats.stream()
                .filter(Heartbeat::stale)
                .map(h -> h.worker() + ": no heartbeat for " + (long) h.ageSeconds() + " s")
                .toList();
    }
}
