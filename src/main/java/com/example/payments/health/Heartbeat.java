package com.example.payments.health;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Proof that a background worker's loop is still turning. The loop calls {@link #touch()} from inside the loop (after
 * each unit of work, plus an idle tick), never from a ticker beside it: a ticker next to the loop proves only that the
 * ticker runs.
 */
public final class Heartbeat {

    private static final long NEVER = Long.MIN_VALUE;

    private final String worker;
    private final Duration staleAfter;
    private final AtomicLong lastTouchNanos = new AtomicLong(NEVER);

    private Heartbeat(String worker, Duration staleAfter) {
        this.worker = worker;
        this.staleAfter = staleAfter;
    }

    /**
     * Creates a heartbeat.
     *
     * @param worker     worker name as shown in liveness errors and the {@code worker} metric tag,
     *                   e.g. {@code idempotency-sweeper}
     * @param staleAfter age after which liveness reports the worker as hung; several times the loop's period
     * @return the heartbeat
     */
    public static Heartbeat create(String worker, Duration staleAfter) {
        return new Heartbeat(worker, staleAfter);
    }

    /** Records that the loop completed an iteration now. */
    public void touch() {
        lastTouchNanos.set(System.nanoTime());
    }

    /**
     * The worker name.
     *
     * @return name
     */
    public String worker() {
        return worker;
    }

    /**
     * Age of the last touch.
     *
     * @return seconds since the last touch, 0 before the first touch
     */
    public double ageSeconds() {
        long last = lastTouchNanos.get();
        return last == NEVER ? 0 : (System.nanoTime() - last) / 1e9;
    }

    /**
     * Whether the worker is stale. Before the first touch a worker counts as alive: staleness detection arms itself
     * only once the loop has shown it runs, otherwise every worker would fail liveness while booting.
     *
     * @return {@code true} when the last touch is older than the threshold
     */
    public boolean stale() {
        long last = lastTouchNanos.get();
        return last != NEVER && System.nanoTime() - last > staleAfter.toNanos();
    }
}
