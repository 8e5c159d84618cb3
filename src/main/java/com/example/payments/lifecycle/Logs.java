package com.example.payments.lifecycle;

import java.util.logging.Handler;
import java.util.logging.Logger;

/**
 * Flushes java.util.logging handlers and the standard streams: the last thing before the process exits, so the
 * story of the shutdown is never lost.
 */
public final class Logs {

    private Logs() {
    }

    /** Flushes every handler of the root logger, then stdout and stderr. */
    public static void flush() {
        for (Handler handler : Logger.getLogger("").getHandlers()) {
            handler.flush();
        }
        System.out.flush();
        System.err.flush();
    }
}
