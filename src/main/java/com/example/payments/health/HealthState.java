package com.example.payments.health;

import java.time.Duration;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import com.example.payments.http.ProblemResponses;

import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;

/**
 * The flags the probes are computed from, shared lock-free between the prober, the shutdown sequence and the probe
 * handlers. A probe handler that could block on a lock could be starved, and a starved liveness handler looks like a
 * dead process to the kubelet, so everything here is a single atomic read or write. The business listener's startup
 * gate ({@link #startupGate()}) reads the startup flag.
 */
public final class HealthState {

    private final AtomicBoolean draining = new AtomicBoolean();
    private final AtomicBoolean wired = new AtomicBoolean();
    private final AtomicBoolean firstProbeSucceeded = new AtomicBoolean();
    // Pessimistic start: not serving until a real round trip through the business port succeeded.
    private final AtomicReference<PortStatus> port = new AtomicReference<>(PortStatus.NOT_RESPONDING);
    // Counted from creation: a process that has just started has not yet failed to make progress.
    private final AtomicLong lastProgressNanos = new AtomicLong(System.nanoTime());
    private final AtomicInteger readinessFailures = new AtomicInteger();
    private volatile long drainDeadlineNanos;

    /**
     * Marks the process as draining. Called as the very first step of the shutdown sequence; never undone.
     *
     * @param drainDeadlineNanos {@link System#nanoTime()} by which the drain will have ended, as far as it is known at
     *                           the signal (signal + pre-drain delay + drain timeout); {@link #drainStarted} makes it
     *                           exact
     * @return {@code true} when this call flipped the flag, {@code false} when it was already set
     */
    public boolean startDraining(long drainDeadlineNanos) {
        // The deadline before the flag: whoever sees draining also sees its deadline.
        if (!draining.get()) {
            this.drainDeadlineNanos = drainDeadlineNanos;
        }
        return draining.compareAndSet(false, true);
    }

    /**
     * Records the drain's own deadline, created when the drain phase began.
     *
     * @param drainDeadlineNanos {@link System#nanoTime()} at which the drain cuts off what is still in flight
     */
    public void drainStarted(long drainDeadlineNanos) {
        this.drainDeadlineNanos = drainDeadlineNanos;
    }

    /**
     * The drain deadline, while draining: a request whose work could not finish before it is not started.
     *
     * @return {@link System#nanoTime()} of the deadline, empty when not draining
     */
    public OptionalLong drainDeadline() {
        return draining.get() ? OptionalLong.of(drainDeadlineNanos) : OptionalLong.empty();
    }

    /**
     * Whether the shutdown sequence has started.
     *
     * @return {@code true} once draining
     */
    public boolean draining() {
        return draining.get();
    }

    /**
     * Records that routes are registered and every dependency is wired. Startup is complete once this has happened
     * and the first loopback probe has succeeded.
     */
    public void markWired() {
        wired.set(true);
    }

    /**
     * Whether startup is complete: routes registered, dependencies wired, first loopback probe succeeded.
     *
     * @return {@code true} once started
     */
    public boolean startupComplete() {
        return wired.get() && firstProbeSucceeded.get();
    }

    /**
     * The startup gate, a filter of the business listener: until startup is complete, answers every route except
     * {@code /ping} with a 503 problem and {@code Retry-After: 1}. {@code /ping} must answer, because the first
     * successful loopback probe is what completes startup.
     *
     * @return the filter
     */
    public Filter startupGate() {
        return this::gate;
    }

    private void gate(FilterChain chain, RoutingRequest req, RoutingResponse res) {
        if (startupComplete() || "/ping".equals(req.path().path())) {
            chain.proceed();
            return;
        }
        ProblemResponses.sendRetryable(req, res, ProblemResponses.starting(), 1);
    }

    /**
     * Written only by the loopback prober. An answer, 503 included, completes startup and counts as progress.
     *
     * @param status what the last probe of the business port saw
     */
    public void probed(PortStatus status) {
        if (status.answered()) {
            firstProbeSucceeded.set(true);
            businessResponded();
        }
        port.set(status);
    }

    /**
     * What the last loopback probe of the business port saw.
     *
     * @return {@link PortStatus#NOT_RESPONDING} until the first answer
     */
    public PortStatus port() {
        return port.get();
    }

    /**
     * Records that the business listener wrote a response, of any status, to any client: it makes progress. Called
     * for every business response, so it is one atomic write.
     */
    public void businessResponded() {
        lastProgressNanos.set(System.nanoTime());
    }

    /**
     * Whether the business listener wrote a response within the window: a busy listener whose loopback probe times
     * out still does; a wedged one does not.
     *
     * @param window {@code health.liveness.progress-window}
     * @return {@code true} when the last response (or successful probe) is at most that old
     */
    public boolean progressedWithin(Duration window) {
        return System.nanoTime() - lastProgressNanos.get() <= window.toNanos();
    }

    /**
     * Counts one failing readiness request for the circuit breaker.
     *
     * @return the new count
     */
    public int readinessFailed() {
        return readinessFailures.incrementAndGet();
    }

    /** Resets the circuit-breaker counter after a successful readiness request. */
    public void readinessSucceeded() {
        readinessFailures.set(0);
    }

    /**
     * Consecutive failing readiness requests since the last success.
     *
     * @return the count, {@code >= 0}
     */
    public int readinessFailures() {
        return readinessFailures.get();
    }
}
