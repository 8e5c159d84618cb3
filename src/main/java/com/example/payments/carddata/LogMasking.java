package com.example.payments.carddata;

import java.io.PrintStream;

/**
 * The console streams' part of the defence that keeps card numbers out of the logs (PCI DSS requirement 3.4: a PAN is
 * unreadable wherever it is stored, logs included): {@link #maskConsole()} makes {@code System.out} and
 * {@code System.err} mask every line they print, whoever prints it ({@code printStackTrace}, the JVM's
 * uncaught-exception handler). Every log line is masked by {@link CardMaskingLayout}, which does not depend on this.
 * Neither can recognise a CVC: the paths that could log request bytes are closed where they start (see
 * {@code docs/card-data.md}).
 */
public final class LogMasking {

    private LogMasking() {
    }

    /**
     * Replaces {@code System.out} and {@code System.err} with masking streams that keep their encodings. Calling it
     * again changes nothing.
     */
    public static synchronized void maskConsole() {
        if (!(System.out instanceof MaskingPrintStream)) {
            System.setOut(new MaskingPrintStream(System.out));
        }
        if (!(System.err instanceof MaskingPrintStream)) {
            System.setErr(new MaskingPrintStream(System.err));
        }
    }

    private static final class MaskingPrintStream extends PrintStream {
        private MaskingPrintStream(PrintStream original) {
            super(new MaskingOutputStream(original), true, original.charset());
        }
    }
}
