package com.example.payments.lifecycle;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import io.helidon.metrics.api.Gauge;
import io.helidon.metrics.api.MeterRegistry;
import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;

/**
 * Counts the requests the business listener is handling right now ({@code http_in_flight_requests}) and lets the
 * drain wait for the count to reach zero. The waiter is woken by the request that brings the count to zero, so the
 * exit follows the last response immediately, with no polling interval added to it.
 */
public final class InFlightCountingFilter implements Filter {

    private final AtomicInteger count = new AtomicInteger();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition idle = lock.newCondition();

    private InFlightCountingFilter(MeterRegistry meters) {
        meters.getOrCreate(Gauge.builder("http_in_flight_requests", count, AtomicInteger::get)
                                   .description("Requests being handled on the business listener"));
    }

    /**
     * Creates the counter and registers its gauge.
     *
     * @param meters registry
     * @return the filter; register it first on the business routing
     */
    public static InFlightCountingFilter create(MeterRegistry meters) {
        return new InFlightCountingFilter(meters);
    }

    @Override
    public void filter(FilterChain chain, RoutingRequest req, RoutingResponse res) {
        count.incrementAndGet();
        try {
            chain.proceed();
        } finally {
            if (count.decrementAndGet() == 0) {
                lock.lock();
                try {
                    idle.signalAll();
                } finally {
                    lock.unlock();
                }
            }
        }
    }

    /**
     * Requests in flight now.
     *
     * @return count
     */
    public int count() {
        return count.get();
    }

    /**
     * Waits until no request is in flight or the deadline passes.
     *
     * @param deadlineNanos {@link System#nanoTime()} value to give up at
     * @return requests still in flight (0 when drained)
     * @throws InterruptedException when the waiting thread is interrupted
     */
    public int awaitIdle(long deadlineNanos) throws InterruptedException {
        lock.lock();
        try {
            while (count.get() > 0) {
                long remaining = deadlineNanos - System.nanoTime();
                if (remaining <= 0) {
                    break;
                }
                idle.await(remaining, TimeUnit.NANOSECONDS);
            }
            return count.get();
        } finally {
            lock.unlock();
        }
    }
}
