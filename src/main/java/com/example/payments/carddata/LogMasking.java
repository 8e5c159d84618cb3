package com.example.payments.carddata;

import java.io.PrintStream;
import java.util.Collections;
import java.util.logging.Handler;
import java.util.logging.LogManager;
import java.util.logging.Logger;

/**
 * The last line of defence that keeps card numbers out of the logs (PCI DSS requirement 3.4: a PAN is unreadable
 * wherever it is stored, logs included), in two layers that do not depend on each other:
 * <ol>
 *     <li>{@link #maskConsole()}: {@code System.out} and {@code System.err} mask every line they print, whoever
 *     prints it (log handlers in any format, {@code printStackTrace}, the JVM's uncaught-exception handler);</li>
 *     <li>{@link #maskHandlers()}: every java.util.logging handler gets a {@link CardDataLogFilter}, which masks each
 *     record before its formatter runs, so a handler writing to a file or a socket is covered too.</li>
 * </ol>
 * Neither can recognise a CVC: the paths that could log request bytes are closed where they start (see
 * {@code docs/card-data.md}).
 */
public final class LogMasking {

    private LogMasking() {
    }

    /**
     * Replaces {@code System.out} and {@code System.err} with masking streams that keep their encodings. Call it
     * first in {@code main}, before logging is configured: the console handler binds to the stream it finds then.
     * Calling it again changes nothing.
     */
    public static synchronized void maskConsole() {
        if (!(System.out instanceof MaskingPrintStream)) {
            System.setOut(new MaskingPrintStream(System.out));
        }
        if (!(System.err instanceof MaskingPrintStream)) {
            System.setErr(new MaskingPrintStream(System.err));
        }
    }

    /**
     * Puts a {@link CardDataLogFilter} in front of the filter of every handler of every logger that exists now
     * (handlers that already have one are left alone). Call it once logging is configured, whatever file configured
     * it ({@code logging.properties} in the working directory or on the class path, or
     * {@code -Djava.util.logging.config.file}).
     */
    public static void maskHandlers() {
        LogManager manager = LogManager.getLogManager();
        for (String name : Collections.list(manager.getLoggerNames())) {
            Logger logger = manager.getLogger(name);
            if (logger == null) {
                continue;
            }
            for (Handler handler : logger.getHandlers()) {
                if (!(handler.getFilter() instanceof CardDataLogFilter)) {
                    handler.setFilter(new CardDataLogFilter(handler.getFilter()));
                }
            }
        }
    }

    private static final class MaskingPrintStream extends PrintStream {
        private MaskingPrintStream(PrintStream original) {
            super(new MaskingOutputStream(original), true, original.charset());
        }
    }
}
