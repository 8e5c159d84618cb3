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
    private static ConsoleWriter err;

    private Logs() {
    }

    /**
     * Replaces {@code System.out} and {@code System.err} with streams of the same encodings whose bytes a platform
     * thread of each writes to the console ({@link ConsoleWriter}: a virtual thread that logs never blocks in a
     * console write), and adds a shutdown hook that drains them. Call it first in {@code main}, before anything
     * wraps the streams or binds to them. Calling it again changes nothing.
     */
    public static synchronized void decoupleConsole() {
        if (out != null) {
            return;
        }
        PrintStream stdout = System.out;
        PrintStream stderr = System.err;
        out = new ConsoleWriter(stdout, "console-stdout");
        err = new ConsoleWriter(stderr, "console-stderr");
        System.setOut(new PrintStream(out, true, stdout.charset()));
        System.setErr(new PrintStream(err, true, stderr.charset()));
        Runtime.getRuntime().addShutdownHook(Thread.ofPlatform().name("console-drain").unstarted(Logs::drain));
    }

    /**
     * Flushes every handler of the root logger, then stdout and stderr, and waits (at most 2 s each) until what they
     * hold reached the console.
     */
    public static void flush() {
        for (Handler handler : Logger.getLogger("").getHandlers()) {
            handler.flush();
        }
        System.out.flush();
        System.err.flush();
        drain();
    }

    private static void drain() {
        ConsoleWriter stdout;
        ConsoleWriter stderr;
        synchronized (Logs.class) {
            stdout = out;
            stderr = err;
        }
        if (stdout != null) {
            stdout.drain();
        }
        if (stderr != null) {
            stderr.drain();
        }
    }
}
