package com.example.payments.idempotency;

import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;

import com.example.payments.http.RequestIds;

/**
 * Runs a store call so that an interrupt of the calling thread cannot break it: on a virtual thread of its own (the
 * request id and the trace context go with it), waited for without giving in to interrupts, the caller's interrupt
 * flag set again once the call ended.
 *
 * <p>Why: the end of the drain interrupts the requests still running, and an interrupt breaks a blocking client
 * library in the middle of a call. Lettuce fails at once ("Command interrupted"); a JDBC socket read on a virtual
 * thread is closed by the interrupt. A decided authorization whose write was broken that way is not recorded, so the
 * retry on another replica asks the issuer again, and a key whose release was broken stays {@code IN_FLIGHT} for a
 * whole lease. Each call is bounded by the store's own timeouts, so the wait ends: Redis' command timeout per
 * command, PostgreSQL's pool wait plus, per statement of the call, its socket timeout ({@code statement-timeout} +
 * 250 ms).
 *
 * <p>A call made from within such a call runs in place: the registry's calls to a PostgreSQL store hop once.
 */
public final class Uninterruptible {

    private static final ThreadLocal<Boolean> SHIELDED = new ThreadLocal<>();

    private Uninterruptible() {
    }

    /**
     * Runs a call off the caller's thread and waits for it, whatever interrupts the caller.
     *
     * @param call the store call, bounded by the store's own timeouts
     * @param <T>  what it returns
     * @return what the call returned
     * @throws RuntimeException what the call threw (e.g. {@link IdempotencyStore.UnavailableException}); a checked
     *                          exception comes wrapped in an {@link IllegalStateException}
     */
    public static <T> T call(Callable<T> call) {
        if (Boolean.TRUE.equals(SHIELDED.get())) {
            return callHere(call);
        }
        Callable<T> propagated = RequestIds.propagate(call);
        FutureTask<T> task = new FutureTask<>(() -> {
            SHIELDED.set(Boolean.TRUE);
            return propagated.call();
        });
        Thread.ofVirtual().name("store-call").start(task);
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return task.get();
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof RuntimeException runtime) {
                        throw runtime;
                    }
                    if (e.getCause() instanceof Error error) {
                        throw error;
                    }
                    throw new IllegalStateException(e.getCause());
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static <T> T callHere(Callable<T> call) {
        try {
            return call.call();
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
