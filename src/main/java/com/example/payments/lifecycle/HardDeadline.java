package com.example.payments.lifecycle;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The last line of defence of the shutdown sequence: when {@code shutdown.hard-deadline} (counted from the signal)
 * passes before the sequence exits, logs the phase that hung, flushes the logs and halts with exit status 1. Halting
 * (not exiting) because a hung phase may hold locks that shutdown hooks would wait on.
 */
final class HardDeadline {

    private static final System.Logger LOGGER = System.getLogger(HardDeadline.class.getName());

    private HardDeadline() {
    }

    /**
     * Starts the watchdog on a daemon thread.
     *
     * @param deadlineNanos {@link System#nanoTime()} value at which to halt, created at the signal
     * @param configured    the configured deadline, for the log line
     * @param phase         the phase running now
     */
    static void arm(long deadlineNanos, Duration configured, Supplier<String> phase) {
        Thread.ofPlatform().name("shutdown-hard-deadline").daemon(true).start(() -> {
            try {
                TimeUnit.NANOSECONDS.sleep(deadlineNanos - System.nanoTime());
            } catch (InterruptedException e) {
                return;
            }
            LOGGER.log(Level.ERROR, "Shutdown hard deadline of {0,number,#} ms exceeded; hung in phase {1}; halting with exit "
                                    + "status 1", configured.toMillis(), phase.get());
            Logs.flush();
            Runtime.getRuntime().halt(1);
        });
    }
}
