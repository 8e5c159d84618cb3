package com.example.payments;

import java.lang.System.Logger.Level;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * When the startup warm-up may stop: once it sent its minimum of requests and the JIT compiler has settled on what
 * they run. A replica whose CPU is limited (a pod's CPU limit of half a core) compiles its hot path on that quota
 * for tens of seconds after its first requests; marked ready before then, it answers its first real requests that
 * slowly, and requests that wait for it fail. On an unlimited machine the compiler settles within a few seconds of
 * the minimum, so the rule costs little there.
 *
 * <p>The rule: the compiler is settled when, in {@value #SETTLED_WINDOWS} consecutive windows of
 * {@value #WINDOW_MS} ms, the JVM's accumulated compilation time ({@link CompilationMXBean#getTotalCompilationTime},
 * ms) grew by less than {@value #SETTLED_PERCENT} % of the window. On a JVM that does not monitor compilation time
 * every window is quiet.
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
        LongSupplier compiledMs = jit != null && jit.isCompilationTimeMonitoringSupported()
                ? jit::getTotalCompilationTime : () -> 0;
        return await(compiledMs, minimumSent, stop, deadlineNano, WINDOW_MS);
    }

    /**
     * The rule over any clock of compilation time, for tests.
     *
     * @param compiledMs   the compilation time so far, ms
     * @param minimumSent  {@code true} once the warm-up sent its minimum
     * @param stop         {@code true} once the warm-up should end early
     * @param deadlineNano {@link System#nanoTime()} at the deadline
     * @param windowMs     the window, ms
     * @return {@code true} when the compiler settled; {@code false} when stopped or past the deadline
     * @throws InterruptedException when interrupted while waiting
     */
    static boolean await(LongSupplier compiledMs, BooleanSupplier minimumSent, BooleanSupplier stop,
                         long deadlineNano, long windowMs) throws InterruptedException {
        long compiled = compiledMs.getAsLong();
        int quiet = 0;
        while (!stop.getAsBoolean() && System.nanoTime() - deadlineNano < 0) {
            Thread.sleep(windowMs);
            long now = compiledMs.getAsLong();
            LOGGER.log(Level.DEBUG, "Warm-up: the JIT compiled for {0} ms in {1} ms", String.valueOf(now - compiled),
                       String.valueOf(windowMs));
            quiet = (now - compiled) * 100 < windowMs * SETTLED_PERCENT ? quiet + 1 : 0;
            compiled = now;
            if (minimumSent.getAsBoolean() && quiet >= SETTLED_WINDOWS) {
                return true;
            }
        }
        return false;
    }
}
