package com.example.payments.idempotency;

import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Supplier;

import com.example.payments.http.RequestIds;
import com.example.payments.observability.Tracing;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Scope;

/**
 * Makes the registry's store calls: each in a client span {@code idempotency.store <operation>}, and the writes, when
 * the store blocks ({@link IdempotencyStore#blocks()}), off the request thread, on a virtual thread of their own that
 * is waited for without giving in to interrupts. A request interrupted by the end of the drain thus still records or
 * releases its key. Each call is bounded by the store's own timeouts.
 */
final class StoreCalls implements AutoCloseable {

    private final boolean storeBlocks;
    private final ExecutorService storeCalls = Executors.newVirtualThreadPerTaskExecutor();

    /**
     * Creates the caller.
     *
     * @param storeBlocks the store's {@link IdempotencyStore#blocks()}: {@code false} runs calls on the caller's
     *                    thread
     */
    StoreCalls(boolean storeBlocks) {
        this.storeBlocks = storeBlocks;
    }

    /**
     * Makes one store call in its span, off the request thread when the store blocks.
     *
     * @param operation the span's operation, e.g. {@code claim}, {@code record}, {@code release}
     * @param call      the store call
     * @param <T>       what it returns
     * @return what the call returned
     * @throws RuntimeException what the call threw (e.g. {@link IdempotencyStore.UnavailableException}); the span
     *                          ends with status error
     */
    <T> T offRequestThread(String operation, Callable<T> call) {
        Span span = storeSpan(operation);
        try (Scope ignored = span.makeCurrent()) {
            return offRequestThread(call);
        } catch (RuntimeException e) {
            span.setStatus(StatusCode.ERROR);
            throw e;
        } finally {
            span.end();
        }
    }

    /**
     * Makes one store call on the caller's thread, in its span: a read, which an interrupt may cut short.
     *
     * @param operation the span's operation, e.g. {@code find-decision}
     * @param call      the store call
     * @param <T>       what it returns
     * @return what the call returned
     * @throws IdempotencyStore.UnavailableException when the store cannot be reached; the span ends with status error
     */
    static <T> T onCallerThread(String operation, Supplier<T> call) {
        Span span = storeSpan(operation);
        try (Scope ignored = span.makeCurrent()) {
            return call.get();
        } catch (IdempotencyStore.UnavailableException e) {
            span.setStatus(StatusCode.ERROR);
            throw e;
        } finally {
            span.end();
        }
    }

    // A span per store call, named by operation only: its arguments hold keys and merchant ids, never put in spans.
    private static Span storeSpan(String operation) {
        return Tracing.tracer().spanBuilder("idempotency.store " + operation).setSpanKind(SpanKind.CLIENT)
                .setAttribute(Tracing.STORE_OPERATION, operation).startSpan();
    }

    // A store that does not block (in this process's memory) does not notice an interrupt either: its calls run on
    // the request thread. Every other one (a client library over the network) gets the hop below.
    //
    // A store call bounded by the store's own timeouts, run on a virtual thread of its own and waited for without
    // giving in to interrupts: an interrupted thread makes Lettuce fail at once ("Command interrupted"), and a key
    // whose release failed that way would stay IN_FLIGHT for a whole lease.
    private <T> T offRequestThread(Callable<T> call) {
        if (!storeBlocks) {
            return callHere(call);
        }
        Future<T> future;
        try {
            future = storeCalls.submit(RequestIds.propagate(call));
        } catch (RejectedExecutionException e) {
            return callHere(call);
        }
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return future.get();
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof RuntimeException runtime) {
                        throw runtime;
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

    /** Accepts no more calls off the request thread (later ones run on the caller's thread); calls under way end. */
    @Override
    public void close() {
        storeCalls.shutdown();
    }
}
