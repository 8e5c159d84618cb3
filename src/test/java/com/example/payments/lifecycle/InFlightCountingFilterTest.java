package com.example.payments.lifecycle;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.helidon.metrics.api.MeterRegistry;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.greaterThanOrEqualTo;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.lessThan;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.mock;

class InFlightCountingFilterTest {

    private final InFlightCountingFilter inFlight = InFlightCountingFilter.create(mock(MeterRegistry.class));
    private final CountDownLatch release = new CountDownLatch(1);

    @AfterEach
    void releaseRequests() {
        release.countDown();
    }

    @Test
    void theDrainEndsWhenTheLastRequestEndsNotAtItsDeadline() throws Exception {
        startRequest();
        startRequest();
        awaitCount(2);
        long start = System.nanoTime();
        Thread lastRequestEnds = Thread.ofVirtual().start(() -> {
            sleep(200);
            release.countDown();
        });
        int remaining = inFlight.awaitIdle(start + Duration.ofSeconds(20).toNanos());
        long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        lastRequestEnds.join();

        assertThat(remaining, is(0));
        assertThat(waitedMs, greaterThanOrEqualTo(150L));
        assertThat("woken by the last request, far from the 20 s deadline", waitedMs, lessThan(5000L));
    }

    @Test
    void theDrainGivesUpAtItsDeadlineAndSaysHowManyAreStillRunning() throws Exception {
        startRequest();
        awaitCount(1);
        long start = System.nanoTime();
        int remaining = inFlight.awaitIdle(start + Duration.ofMillis(300).toNanos());
        long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

        assertThat(remaining, is(1));
        assertThat(waitedMs, greaterThanOrEqualTo(290L));
    }

    @Test
    void withNothingInFlightTheDrainEndsAtOnce() throws Exception {
        long start = System.nanoTime();
        assertThat(inFlight.awaitIdle(start + Duration.ofSeconds(20).toNanos()), is(0));
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), lessThan(1000L));
    }

    @Test
    void aFailingRequestLeavesTheCount() {
        FilterChain chain = mock(FilterChain.class);
        doAnswer(invocation -> {
            throw new IllegalStateException("handler bug");
        }).when(chain).proceed();
        try {
            inFlight.filter(chain, mock(RoutingRequest.class), mock(RoutingResponse.class));
        } catch (IllegalStateException expected) {
            // the handler's failure propagates
        }
        assertThat(inFlight.count(), is(0));
    }

    private void startRequest() {
        FilterChain chain = mock(FilterChain.class);
        doAnswer(invocation -> {
            release.await();
            return null;
        }).when(chain).proceed();
        Thread.ofVirtual().start(() -> inFlight.filter(chain, mock(RoutingRequest.class), mock(RoutingResponse.class)));
    }

    private void awaitCount(int expected) {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (inFlight.count() < expected && System.nanoTime() < deadline) {
            sleep(5);
        }
        assertThat(inFlight.count(), is(expected));
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
