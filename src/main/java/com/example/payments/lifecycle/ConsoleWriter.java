package com.example.payments.lifecycle;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The stream under {@code System.out} and {@code System.err}: it hands the bytes written to it to a platform thread of
 * its own, which writes them to the console stream under it. A request's virtual thread that logs a line (the access
 * log writes one per request) copies it into memory and goes on; it never makes a blocking console write itself,
 * which on a virtual thread holds its carrier and makes the scheduler start more carriers to compensate (measured in
 * {@code load-tests/reports/post-path-*.md}: with the access log on, written directly, the POST path cost twice the
 * CPU per request).
 *
 * <ul>
 *     <li>Order: bytes reach the console in the order they were written here.</li>
 *     <li>Batches: the writer thread collects what arrives for up to {@value #BATCH_WINDOW_MS} ms (or
 *     {@value #BATCH_BYTES} bytes) and writes it in one call, so under load a console write carries many lines.
 *     A line written alone reaches the console within {@value #BATCH_WINDOW_MS} ms.</li>
 *     <li>{@link #flush()} does nothing (a {@code PrintStream} flushes after every line); {@link #drain()} waits
 *     until everything written so far reached the console (flushed), bounded by 2 s.</li>
 *     <li>Nothing is dropped: when {@value #MAX_PENDING_BYTES} bytes wait (a console that stopped reading), writers
 *     wait for room.</li>
 *     <li>Loss: what was written in the last moments before a {@code kill -9} (or a JVM crash) may be lost, as with
 *     any buffered log. Every exit of the service drains first ({@link Logs#flush()}, and a shutdown hook for
 *     {@code System.exit} from elsewhere).</li>
 * </ul>
 */
final class ConsoleWriter extends OutputStream {

    static final int MAX_PENDING_BYTES = 1024 * 1024;
    static final int BATCH_BYTES = 64 * 1024;
    static final int BATCH_WINDOW_MS = 10;
    private static final long DRAIN_BOUND_NANOS = TimeUnit.SECONDS.toNanos(2);

    private final OutputStream console;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition work = lock.newCondition();
    private final Condition progress = lock.newCondition();
    private ByteArrayOutputStream pending = new ByteArrayOutputStream(8192);
    private ByteArrayOutputStream spare = new ByteArrayOutputStream(8192);
    private long accepted;
    private long written;
    private int drainers;

    /**
     * Starts the writer thread (a daemon platform thread named {@code name}).
     *
     * @param console the stream to write to, flushed after every batch
     * @param name    the writer thread's name
     */
    ConsoleWriter(OutputStream console, String name) {
        this.console = console;
        Thread.ofPlatform().name(name).daemon().start(this::writeBatches);
    }

    @Override
    public void write(int b) {
        write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] bytes, int offset, int length) {
        lock.lock();
        try {
            while (pending.size() >= MAX_PENDING_BYTES) {
                work.signal();
                progress.awaitUninterruptibly();
            }
            int before = pending.size();
            boolean wake = before == 0 || before < BATCH_BYTES && before + length >= BATCH_BYTES;
            pending.write(bytes, offset, length);
            accepted += length;
            if (wake) {
                work.signal();
            }
        } finally {
            lock.unlock();
        }
    }

    /** Does nothing: the writer thread writes every batch within {@value #BATCH_WINDOW_MS} ms; see {@link #drain()}. */
    @Override
    public void flush() {
    }

    /**
     * Waits until every byte written before this call reached the console (flushed), at most 2 s.
     *
     * @return whether it did within the bound
     */
    boolean drain() {
        lock.lock();
        try {
            long target = accepted;
            long left = DRAIN_BOUND_NANOS;
            drainers++;
            work.signal();
            while (written < target && left > 0) {
                left = progress.awaitNanos(left);
            }
            return written >= target;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } finally {
            drainers--;
            lock.unlock();
        }
    }

    private void writeBatches() {
        while (true) {
            ByteArrayOutputStream batch;
            lock.lock();
            try {
                while (pending.size() == 0) {
                    work.awaitUninterruptibly();
                }
                long window = TimeUnit.MILLISECONDS.toNanos(BATCH_WINDOW_MS);
                while (window > 0 && drainers == 0 && pending.size() < BATCH_BYTES) {
                    try {
                        window = work.awaitNanos(window);
                    } catch (InterruptedException e) {
                        window = 0; // nobody interrupts this thread; if someone does, write now
                    }
                }
                batch = pending;
                pending = spare;
                spare = null;
            } finally {
                lock.unlock();
            }
            try {
                batch.writeTo(console);
                console.flush();
            } catch (Exception ignored) {
                // The console under it is a PrintStream, which records errors instead of throwing them.
            }
            lock.lock();
            try {
                written += batch.size();
                batch.reset();
                spare = batch;
                progress.signalAll();
            } finally {
                lock.unlock();
            }
        }
    }
}
