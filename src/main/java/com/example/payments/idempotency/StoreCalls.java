package com.example.payments.idempotency;

import java.util.function.Supplier;

import com.example.payments.observability.Tracing;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Scope;

/**
 * Makes the registry's store calls: each in a client span {@code idempotency.store <operation>}, and the writes, when
 * the store blocks ({@link IdempotencyStore#blocks()}), off the request thread ({@link Uninterruptible}): a request
 * interrupted by the end of the drain thus still records or releases its key.
 */
final class StoreCalls {

    private final boolean storeBlocks;

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
    <T> T offRequestThread(String operation, Supplier<T> call) {
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
     * Makes one store call on the caller's thread, in its span: a read, which an interrupt may cut short (a Redis one;
     * a PostgreSQL store's calls hop anyway, {@code DatabaseCalls}).
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
    // the request thread. Every other one (a client library over the network) gets the hop.
    private <T> T offRequestThread(Supplier<T> call) {
        return storeBlocks ? Uninterruptible.call(call::get) : call.get();
    }
}
