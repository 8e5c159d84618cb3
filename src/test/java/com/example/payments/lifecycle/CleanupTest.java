package com.example.payments.lifecycle;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import com.example.payments.health.Heartbeat;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.greaterThanOrEqualTo;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.lessThan;

class CleanupTest {

    private final CountDownLatch never = new CountDownLatch(1);

    @AfterEach
    void releaseHungThreads() {
        never.countDown();
    }

    @Test
    void aResourceThatNeverClosesIsAbandonedAtTheCleanupTimeoutAndTheOthersStillClose() throws Exception {
        AtomicBoolean closed = new AtomicBoolean();
        long start = System.nanoTime();
        List<String> abandoned = Cleanup.run(List.of(), List.of(
                Map.entry("hung-client", () -> never.await()),
                Map.entry("good-client", () -> closed.set(true))), Duration.ofMillis(300));
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

        assertThat(abandoned, is(List.of("hung-client")));
        assertThat(closed.get(), is(true));
        assertThat(tookMs, greaterThanOrEqualTo(290L));
        assertThat(tookMs, lessThan(3000L));
    }

    @Test
    void aResourceThatFailsToCloseIsLoggedNotAbandoned() throws Exception {
        List<String> abandoned = Cleanup.run(List.of(), List.of(Map.entry("broken", () -> {
            throw new IllegalStateException("already closed");
        })), Duration.ofSeconds(1));

        assertThat(abandoned, is(List.of()));
    }

    @Test
    void workersStopBeforeTheResourcesTheyUseClose() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        PeriodicWorker worker = PeriodicWorker.start(Heartbeat.create("test-worker", Duration.ofSeconds(10)),
                                                     Duration.ofMillis(10), runs::incrementAndGet);
        AtomicInteger runsAtClose = new AtomicInteger(-1);
        AtomicInteger runsAfterClose = new AtomicInteger(-2);
        List<String> abandoned = Cleanup.run(List.of(worker), List.of(Map.entry("store", () -> {
            runsAtClose.set(runs.get());
            Thread.sleep(100);
            runsAfterClose.set(runs.get());
        })), Duration.ofSeconds(2));

        assertThat(abandoned, is(List.of()));
        assertThat("no worker run while the store closed", runsAfterClose.get(), is(runsAtClose.get()));
    }
}
