package com.example.payments.lifecycle;

import java.lang.System.Logger.Level;
import java.util.function.Consumer;

import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * Installs handlers for SIGTERM (what Kubernetes sends) and SIGINT (Ctrl+C).
 *
 * <p>Why {@code sun.misc.Signal} (module {@code jdk.unsupported}, readable from the class path, so it works under
 * {@code java -jar}) and not a JVM shutdown hook: by the time a shutdown hook runs, the JDK's own logging hook resets
 * the handlers concurrently, so the log lines of the shutdown are lost, and the process exits 143. Handling the signal
 * before JVM shutdown begins keeps every line and lets the sequence choose the exit status.
 */
public final class Signals {

    private static final System.Logger LOGGER = System.getLogger(Signals.class.getName());

    private Signals() {
    }

    /**
     * Routes SIGTERM and SIGINT to the given action, which must return quickly (it runs on the JVM's signal
     * dispatcher thread).
     *
     * @param onSignal called with {@code "SIGTERM"} or {@code "SIGINT"}, once per signal received
     */
    public static void install(Consumer<String> onSignal) {
        install("TERM", onSignal);
        install("INT", onSignal);
    }

    private static void install(String name, Consumer<String> onSignal) {
        SignalHandler previous = Signal.handle(new Signal(name), signal -> onSignal.accept("SIG" + name));
        if (previous == SignalHandler.SIG_IGN) {
            // The JVM leaves a signal that was ignored when the process started ignored (a shell starts background
            // jobs with SIGINT ignored); say so rather than let Ctrl+C or kill -INT seem to do nothing.
            LOGGER.log(Level.WARNING, "SIG{0} was ignored when this process started and stays ignored: it will not "
                                      + "start the shutdown sequence",
                       name);
        }
    }
}
