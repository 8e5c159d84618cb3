package com.example.payments.lifecycle;

import java.io.PrintStream;
import java.util.logging.Handler;
import java.util.logging.Logger;

/**
 * The console the logs go to: written by a thread of its own ({@link #decoupleConsole()}), and flushed as the last
 * thing before the process exits ({@link #flush()}), so the story of the shutdown is never lost.
 */
public final class Logs {

    private static ConsoleWriter out;

    private Logs() {
    }

    /**
     * Replaces {@code System.out} with a stream of the same encoding whose bytes a platform thread writes to the
     * console ({@link ConsoleWriter}: a virtual thread that logs does not block in a console write), and adds a
     * shutdown hook that drains it and makes later writes go straight through. {@code System.err} stays as it is:
     * it carries what must not wait (a configuration error before exit 2, an uncaught exception, the JVM's own
     * messages). Call it first in {@code main}, before anything wraps the streams or binds to them. Calling it again
     * changes nothing.
     */
    public static synchronized void decoupleConsole() {
        if (out != null) {
            return;
        }
        PrintStream stdout = System.out;
        out = new ConsoleWriter(stdout, "console-stdout");
        System.setOut(new PrintStream(out, true, stdout.charset()));
        ConsoleWriter writer = out;
        Runtime.getRuntime().addShutdownHook(Thread.ofPlatform().name("console-drain")
                                                     .unstarted(writer::drainAndWriteThrough));
    }

    /**
     * Flushes every handler of the root logger, then stdout and stderr, and waits (at most 2 s) until what stdout
     * holds reached the console.
     */
    public static void flush() {
        for (Handler handler : Logger.getLogger("").getHandlers()) {
            handler.flush();
        }
        System.out.flush();
        System.err.flush();
        ConsoleWriter writer;
        synchronized (Logs.class) {
            writer = out;
        }
        if (writer != null) {
            writer.drain();
        }
    }
}
