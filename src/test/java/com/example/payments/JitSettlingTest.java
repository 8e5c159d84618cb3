package com.example.payments;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.greaterThanOrEqualTo;
import static org.hamcrest.Matchers.is;

/**
 * When the warm-up may stop ({@link JitSettling}): after its minimum, once two windows in a row compiled for under
 * 10 % of their time; never before the minimum; and at the deadline or the stop, whatever the compiler does.
 */
class JitSettlingTest {

    private static final long WINDOW_MS = 10;

    @Test
    void twoQuietWindowsAfterTheMinimumSettleIt() throws Exception {
        AtomicInteger windows = new AtomicInteger();
        // Busy for three windows (a full window of compilation each), then quiet.
        AtomicLong compiled = new AtomicLong();
        boolean settled = JitSettling.await(() -> windows.getAndIncrement() <= 3 ? compiled.addAndGet(WINDOW_MS)
                                                    : compiled.get(),
                                            () -> true, () -> false, deadlineIn(10_000), WINDOW_MS);
        assertThat(settled, is(true));
        // One read before the first window, three busy windows, two quiet ones.
        assertThat(windows.get(), is(6));
    }

    @Test
    void aCompilerThatNeverQuietsRunsToTheDeadline() throws Exception {
        AtomicLong compiled = new AtomicLong();
        long start = System.nanoTime();
        assertThat(JitSettling.await(() -> compiled.addAndGet(WINDOW_MS / 5), () -> true, () -> false,
                                     deadlineIn(200), WINDOW_MS), is(false));
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), greaterThanOrEqualTo(200L));
    }

    @Test
    void aQuietCompilerDoesNotEndItBeforeTheMinimum() throws Exception {
        AtomicInteger reads = new AtomicInteger();
        assertThat(JitSettling.await(() -> {
            reads.incrementAndGet();
            return 0;
        }, () -> reads.get() > 8, () -> false, deadlineIn(10_000), WINDOW_MS), is(true));
        // Quiet from the second window on, but the minimum came with the ninth read (the eighth window).
        assertThat(reads.get(), is(9));
    }

    @Test
    void theStopEndsIt() throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger windows = new AtomicInteger();
        assertThat(JitSettling.await(() -> {
            stop.set(windows.incrementAndGet() > 2);
            return 0;
        }, () -> false, stop::get, deadlineIn(10_000), WINDOW_MS), is(false));
    }

    private static long deadlineIn(long millis) {
        return System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    }
}
