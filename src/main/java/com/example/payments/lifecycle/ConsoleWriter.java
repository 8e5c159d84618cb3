package com.example.payments.lifecycle;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The stream under {@code System.out}: it hands the bytes written to it to a platform thread of its own, which writes
 * them to the console stream under it. A request's virtual thread that logs a line (the access log writes one per
 * request) copies it into memory and goes on; it does not make a blocking console write itself, which on a virtual
 * thread holds its carrier and makes the scheduler start more carriers to compensate. Measured while working on the
 * POST path (one CPU, access log on, profiled with async-profiler): three carriers on one CPU, and about 220 µs of
 * CPU per request against about 165 µs once the console was written here.
 *
 * <ul>
 *     <li>Order: bytes reach the console in the order they were written here.</li>
 *     <li>Batches: the writer thread collects what arrives for up to {@value #BATCH_WINDOW_MS} ms (or
 *     {@value #BATCH_BYTES} bytes) and writes it in one call, so under load a console write carries many lines.
 *     A line written alone reaches the console within {@value #BATCH_WINDOW_MS} ms.</li>
 *     <li>{@link #flush()} does nothing (a {@code PrintStream} flushes after every line); {@link #drain()} waits
 *     until everything written so far reached the console (flushed), bounded by 2 s.</li>
 *     <li>Nothing is dropped: when {@value #MAX_PENDING_BYTES} bytes wait (a console that stopped reading), writers
 *     wait for room, as they would have waited for a console write.</li>
 *     <li>Loss: what was written in the last 10 ms before a {@code kill -9}, a JVM crash or an exit that runs no
 *     shutdown hook ({@code -XX:+ExitOnOutOfMemoryError}, the image's) may be lost, as with any buffered log. Every
 *     exit of the service drains first ({@link Logs#flush()}), and the JVM's shutdown hooks switch it to writing
 *     straight through ({@link #drainAndWriteThrough()}).</li>
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
    private boolean direct;

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
            while (!direct && pending.size() >= MAX_PENDING_BYTES) {
                work.signal();
                progress.awaitUninterruptibly();
            }
            if (direct) {
                writeThrough(bytes, offset, length);
                return;
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
            return awaitWritten(accepted);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Drains, then writes every later write straight to the console on the caller's thread: for the JVM's shutdown
     * hooks, after which the writer thread (a daemon) may be stopped at any moment.
     */
    void drainAndWriteThrough() {
        lock.lock();
        try {
            awaitWritten(accepted);
            direct = true;
        } finally {
            lock.unlock();
        }
    }

    // With the lock held: waits at most DRAIN_BOUND_NANOS until target bytes were written; an interrupt does not cut
    // the wait short (an exiting thread is often interrupted) and is kept for the caller.
    private boolean awaitWritten(long target) {
        long deadline = System.nanoTime() + DRAIN_BOUND_NANOS;
        boolean interrupted = false;
        drainers++;
        try {
            work.signal();
            long left = deadline - System.nanoTime();
            while (written < target && left > 0) {
                try {
                    progress.awaitNanos(left);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
                left = deadline - System.nanoTime();
            }
            return written >= target;
        } finally {
            drainers--;
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    // With the lock held, in direct mode: what is still pending first (if the writer thread did not get to it), then
    // these bytes, in order.
    private void writeThrough(byte[] bytes, int offset, int length) {
        try {
            if (pending.size() > 0) {
                written += pending.size();
                pending.writeTo(console);
                pending.reset();
            }
            console.write(bytes, offset, length);
            console.flush();
        } catch (Throwable ignored) {
            // A PrintStream records its errors instead of throwing them; nothing else is left to tell.
        }
        accepted += length;
        written += length;
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
            } catch (Throwable ignored) {
                // The console under it is a PrintStream, which records errors instead of throwing them; anything else
                // (an Error) must not stop this thread, or every writer would wait for room forever.
            }
            lock.lock();
            try {
                written += batch.size();
                // A burst grew it: give the memory back rather than keep MAX_PENDING_BYTES per stream for good.
                spare = batch.size() > 2 * BATCH_BYTES ? new ByteArrayOutputStream(8192) : batch;
                spare.reset();
                progress.signalAll();
            } finally {
                lock.unlock();
            }
        }
    }
}
