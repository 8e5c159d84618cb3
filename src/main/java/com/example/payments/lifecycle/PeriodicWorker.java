package com.example.payments.lifecycle;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import com.example.payments.health.Heartbeat;

/**
 * A background worker that runs one task every interval on its own platform thread and touches its
 * {@link Heartbeat} from inside the loop: after each run, so a task that hangs stops the heartbeat and liveness
 * reports the worker as hung.
 */
public final class PeriodicWorker {

    private static final System.Logger LOGGER = System.getLogger(PeriodicWorker.class.getName());

    private final Heartbeat heartbeat;
    private final Duration interval;
    private final Runnable task;
    private final Thread thread;
    private volatile boolean running = true;

    private PeriodicWorker(Heartbeat heartbeat, Duration interval, Runnable task) {
        this.heartbeat = heartbeat;
        this.interval = interval;
        this.task = task;
        this.thread = new Thread(this::loop, heartbeat.worker());
        this.thread.setDaemon(true);
    }

    /**
     * Creates and starts a worker.
     *
     * @param heartbeat its heartbeat; the worker's name is the heartbeat's
     * @param interval  pause between runs
     * @param task      one unit of work; exceptions are logged and the loop continues
     * @return the running worker
     */
    public static PeriodicWorker start(Heartbeat heartbeat, Duration interval, Runnable task) {
        PeriodicWorker worker = new PeriodicWorker(heartbeat, interval, task);
        worker.thread.start();
        return worker;
    }

    /**
     * The worker's name.
     *
     * @return name
     */
    public String name() {
        return heartbeat.worker();
    }

    /** Asks the loop to stop and interrupts its pause; no new run starts. Returns at once. */
    public void requestStop() {
        running = false;
        thread.interrupt();
    }

    /**
     * Waits for the loop to end after {@link #requestStop()}.
     *
     * @param deadlineNanos {@link System#nanoTime()} value after which the worker is abandoned (it runs on a daemon
     *                      thread, so it cannot hold the process up)
     * @return {@code true} when the loop ended before the deadline
     * @throws InterruptedException when the calling thread is interrupted
     */
    public boolean awaitStop(long deadlineNanos) throws InterruptedException {
        long remaining = deadlineNanos - System.nanoTime();
        if (remaining > 0) {
            thread.join(Duration.ofNanos(remaining));
        }
        return !thread.isAlive();
    }

    private void loop() {
        while (running) {
            try {
                task.run();
            } catch (RuntimeException e) {
                LOGGER.log(Level.WARNING, "Worker " + heartbeat.worker() + " run failed", e);
            }
            heartbeat.touch();
            try {
                TimeUnit.NANOSECONDS.sleep(interval.toNanos());
            } catch (InterruptedException e) {
                return;
            }
        }
    }
}
