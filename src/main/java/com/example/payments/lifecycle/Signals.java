package com.example.payments.lifecycle;

import java.util.function.Consumer;

import sun.misc.Signal;

/**
 * Installs handlers for SIGTERM (what Kubernetes sends) and SIGINT (Ctrl+C).
 *
 * <p>Why {@code sun.misc.Signal} (module {@code jdk.unsupported}) and not a JVM shutdown hook: by the time a shutdown
 * hook runs, the JDK's own logging hook resets the handlers concurrently, so the log lines of the shutdown are lost,
 * and the process exits 143. Handling the signal before JVM shutdown begins keeps every line and lets the sequence
 * choose the exit status.
 */
public final class Signals {

    private Signals() {
    }

    /**
     * Routes SIGTERM and SIGINT to the given action, which must return quickly (it runs on the JVM's signal
     * dispatcher thread).
     *
     * @param onSignal called with {@code "SIGTERM"} or {@code "SIGINT"}
     */
    public static void install(Consumer<String> onSignal) {
        Signal.handle(new Signal("TERM"), signal -> onSignal.accept("SIGTERM"));
        Signal.handle(new Signal("INT"), signal -> onSignal.accept("SIGINT"));
    }
}
