package com.example.payments.carddata;

import java.util.IdentityHashMap;
import java.util.Map;

/**
 * A copy of an exception for a log record, with card numbers masked in its message and in those of its causes and
 * suppressed exceptions. It prints exactly like the original ({@code class: message}, the same stack frames, the same
 * {@code Caused by:} and {@code Suppressed:} sections), only masked.
 */
final class MaskedThrowable extends Throwable {

    private final String description;
    private MaskedThrowable cause;

    private MaskedThrowable(Throwable original) {
        super(PanDetector.mask(original.getMessage()), null, true, true);
        this.description = PanDetector.mask(original.toString());
        setStackTrace(original.getStackTrace());
    }

    /**
     * Copies an exception chain with masked texts.
     *
     * @param original the exception as thrown
     * @return the masked copy
     */
    static MaskedThrowable of(Throwable original) {
        return copy(original, new IdentityHashMap<>());
    }

    private static MaskedThrowable copy(Throwable original, Map<Throwable, MaskedThrowable> copies) {
        MaskedThrowable existing = copies.get(original);
        if (existing != null) {
            return existing;
        }
        MaskedThrowable copy = new MaskedThrowable(original);
        copies.put(original, copy);
        Throwable cause = original.getCause();
        if (cause != null) {
            MaskedThrowable maskedCause = copy(cause, copies);
            // A cause cycle (a rare bug elsewhere) must not make logging fail.
            if (maskedCause != copy) {
                copy.cause = maskedCause;
            }
        }
        for (Throwable suppressed : original.getSuppressed()) {
            MaskedThrowable maskedSuppressed = copy(suppressed, copies);
            if (maskedSuppressed != copy) {
                copy.addSuppressed(maskedSuppressed);
            }
        }
        return copy;
    }

    @Override
    public synchronized Throwable getCause() {
        return cause;
    }

    @Override
    public String toString() {
        return description;
    }
}
