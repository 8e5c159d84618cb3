package com.example.payments.lifecycle;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import com.example.payments.logging.Logging;

/**
 * The last line of defence of the shutdown sequence: when {@code shutdown.hard-deadline} (default 30 s, counted from
 * the signal) passes before the process has exited, logs the phase that hung, writes every queued log line and stops
 * logging (waiting at most 2 s for both), and halts with exit status 1. The line goes to standard error as it is
 * first, so that the reason for exit status 1 is never lost. Halting, not exiting, because the hang may be a
 * JVM shutdown hook, and {@code System.exit} would wait for it.
 *
 * <p>Every phase of the sequence is bounded by its own timeout, so what this catches is whatever is not: a JVM
 * shutdown hook of some library that never returns, a store that hangs while keys are released, a bug.
 */
final class HardDeadline {

    private static final System.Logger LOGGER = System.getLogger(ShutdownSequence.class.getName());
    private static final long LAST_WORDS_MS = 2_000;

    private HardDeadline() {
    }

    /**
     * Starts the watchdog on a daemon thread.
     *
     * @param deadlineNanos {@link System#nanoTime()} value at which to halt, computed from the signal's time
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
            String message = "Shutdown hard deadline of " + configured.toMillis() + " ms exceeded; hung in phase "
                             + phase.get() + "; halting with exit status 1";
            // On a thread of its own, waited for at most LAST_WORDS_MS: a console that stopped reading (a full pipe,
            // the logging threads waiting for room in the queue) must not keep the halt waiting.
            Thread lastWords = Thread.ofPlatform().name("shutdown-last-words").daemon(true).start(() -> {
                // First as it is, on the process's standard error: nothing in the logging library can lose it there
                // (a CI run once halted with neither line in its output). Then through logging, the line log
                // pipelines parse, and the flush.
                new PrintStream(new FileOutputStream(FileDescriptor.err), true, StandardCharsets.UTF_8)
                        .println(message);
                // Hung in a JVM shutdown hook: the sequence had stopped logging already, as its last step.
                Logging.restartIfStopped();
                LOGGER.log(Level.ERROR, message);
                Logging.stop();
            });
            try {
                lastWords.join(LAST_WORDS_MS);
            } catch (InterruptedException ignored) {
                // halting anyway
            }
            Runtime.getRuntime().halt(1);
        });
    }
}
