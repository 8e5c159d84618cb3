package com.example.payments.lifecycle;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.IntSupplier;

import com.example.payments.health.HealthState;
import com.example.payments.idempotency.IdempotencyRegistry;

import io.helidon.metrics.api.MeterRegistry;
import io.helidon.webserver.WebServer;

/**
 * Collects the parts of a {@link ShutdownSequence} ({@link ShutdownSequence#builder()}): what it drains, waits on,
 * releases, stops and closes, and where its phase durations go. Settings, state, servers, in-flight counter, registry
 * and meters are required; workers, resources and what closes when the drain begins are optional, each kept in
 * registration order.
 */
public final class ShutdownSequenceBuilder {
    // Read by the sequence's constructor, which checks the required ones.
    ShutdownSettings settings;
    HealthState state;
    WebServer business;
    WebServer health;
    InFlightCountingFilter inFlight;
    IntSupplier closeHalfSent = () -> 0;
    IdempotencyRegistry registry;
    MeterRegistry meters;
    final List<PeriodicWorker> workers = new ArrayList<>();
    final List<Map.Entry<String, AutoCloseable>> atDrain = new ArrayList<>();
    final List<Map.Entry<String, AutoCloseable>> resources = new ArrayList<>();

    ShutdownSequenceBuilder() {
    }

    /**
     * @param settings {@code shutdown.*}
     * @return this builder
     */
    public ShutdownSequenceBuilder settings(ShutdownSettings settings) {
        this.settings = settings;
        return this;
    }

    /**
     * @param state where draining is set
     * @return this builder
     */
    public ShutdownSequenceBuilder state(HealthState state) {
        this.state = state;
        return this;
    }

    /**
     * @param business the business server (drained)
     * @param health   the health server (closed last)
     * @return this builder
     */
    public ShutdownSequenceBuilder servers(WebServer business, WebServer health) {
        this.business = business;
        this.health = health;
        return this;
    }

    /**
     * @param inFlight the business listener's in-flight counter, which the drain waits on
     * @return this builder
     */
    public ShutdownSequenceBuilder inFlight(InFlightCountingFilter inFlight) {
        this.inFlight = inFlight;
        return this;
    }

    /**
     * @param closeHalfSent closes the business connections still sending a request head when the drain begins
     *                      (nothing is in flight on them) and returns how many; default: none
     * @return this builder
     */
    public ShutdownSequenceBuilder halfSentRequests(IntSupplier closeHalfSent) {
        this.closeHalfSent = closeHalfSent;
        return this;
    }

    /**
     * @param registry idempotency registry whose held keys are released after the drain
     * @return this builder
     */
    public ShutdownSequenceBuilder registry(IdempotencyRegistry registry) {
        this.registry = registry;
        return this;
    }

    /**
     * @param meters where {@code shutdown_duration_seconds} goes
     * @return this builder
     */
    public ShutdownSequenceBuilder meters(MeterRegistry meters) {
        this.meters = meters;
        return this;
    }

    /**
     * @param worker a background worker stopped in the cleanup phase, before the resources close
     * @return this builder
     */
    public ShutdownSequenceBuilder addWorker(PeriodicWorker worker) {
        workers.add(worker);
        return this;
    }

    /**
     * @param name     name for the log
     * @param resource closed in the cleanup phase, in parallel with the others
     * @return this builder
     */
    public ShutdownSequenceBuilder addResource(String name, AutoCloseable resource) {
        resources.add(Map.entry(name, resource));
        return this;
    }

    /**
     * Adds every {@link ShutdownResource} found on the class path as a resource of the cleanup phase.
     *
     * @return this builder
     */
    public ShutdownSequenceBuilder addDiscoveredResources() {
        ShutdownResource.discover().forEach(resource -> addResource(resource.name(), resource));
        return this;
    }

    /**
     * @param name     name for the log
     * @param observer closed when the drain begins, because it observes the business listener the drain closes
     *                 (the loopback prober would otherwise log a failure for every probe until the cleanup)
     * @return this builder
     */
    public ShutdownSequenceBuilder closeWhenDrainBegins(String name, AutoCloseable observer) {
        atDrain.add(Map.entry(name, observer));
        return this;
    }

    /**
     * Builds the sequence.
     *
     * @return the sequence
     * @throws NullPointerException when a required part is missing
     */
    public ShutdownSequence build() {
        return new ShutdownSequence(this);
    }
}
