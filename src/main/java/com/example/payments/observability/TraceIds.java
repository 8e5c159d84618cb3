package com.example.payments.observability;

import java.util.concurrent.ThreadLocalRandom;

import com.example.payments.http.RequestIds;

import io.opentelemetry.sdk.trace.IdGenerator;

/**
 * The trace and span ids of the spans this service starts: random, like the SDK's own, and drawn again while they
 * hold a run of digits that could pass for a card number ({@link RequestIds#usable}); a trace id started here is the
 * request's {@code X-Request-Id}.
 */
final class TraceIds implements IdGenerator {

    @Override
    public String generateSpanId() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        String id;
        do {
            id = String.format("%016x", random.nextLong());
        } while (!RequestIds.usable(id));
        return id;
    }

    @Override
    public String generateTraceId() {
        return RequestIds.fresh();
    }
}
