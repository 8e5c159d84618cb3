package com.example.payments;

import java.lang.System.Logger.Level;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.util.function.BooleanSupplier;

/**
 * When the startup warm-up may stop: once it sent its minimum of requests and the JIT compiler has settled on what
 * they run. A replica whose CPU is limited (a pod's CPU limit of half a core) compiles its hot path on that quota
 * for tens of seconds after its first requests; marked ready before then, it answers its first real requests that
 * slowly, and requests that wait for it fail. On an unlimited machine the compiler settles within a few seconds of
 * the minimum, so the rule costs little there.
 *
 * <p>The rule: the compiler is settled when, in {@value #SETTLED_WINDOWS} consecutive windows of
 * {@value #WINDOW_MS} ms, the JVM's accumulated compilation time ({@link CompilationMXBean#getTotalCompilationTime},
 * ms) grew by less than {@value #SETTLED_PERCENT} % of the window. A JVM that does not monitor compilation time
 * counts as settled at once.
 */
final class JitSettling {

    private static final System.Logger LOGGER = System.getLogger(JitSettling.class.getName());
    static final long WINDOW_MS = 500;
    static final int SETTLED_WINDOWS = 2;
    static final int SETTLED_PERCENT = 10;

    private JitSettling() {
    }

    /**
     * Blocks until {@code minimumSent} holds and the compiler has settled, {@code stop} holds, or the deadline.
     *
     * @param minimumSent  {@code true} once the warm-up sent its minimum ({@code warm-up.requests})
     * @param stop         {@code true} once the warm-up should end early (the shutdown began)
     * @param deadlineNano {@link System#nanoTime()} at {@code warm-up.timeout}
     * @return {@code true} when the compiler settled; {@code false} when stopped or past the deadline
     * @throws InterruptedException when interrupted while waiting
     */
    static boolean await(BooleanSupplier minimumSent, BooleanSupplier stop, long deadlineNano)
            throws InterruptedException {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        boolean timed = jit != null && jit.isCompilationTimeMonitoringSupported();
        long compiled = timed ? jit.getTotalCompilationTime() : 0;
        int quiet = 0;
        while (!stop.getAsBoolean() && System.nanoTime() - deadlineNano < 0) {
            Thread.sleep(WINDOW_MS);
            long now = timed ? jit.getTotalCompilationTime() : compiled;
            boolean quietWindow = (now - compiled) * 100 < WINDOW_MS * SETTLED_PERCENT;
            LOGGER.log(Level.DEBUG, "Warm-up: the JIT compiled for {0} ms in {1} ms", String.valueOf(now - compiled),
                       String.valueOf(WINDOW_MS));
            compiled = now;
            quiet = quietWindow ? quiet + 1 : 0;
            if (minimumSent.getAsBoolean() && quiet >= SETTLED_WINDOWS) {
                return true;
            }
        }
        return false;
    }
}
