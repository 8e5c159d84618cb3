package com.example.payments.lifecycle;

import java.util.List;

import io.helidon.metrics.api.MeterRegistry;
import io.helidon.metrics.api.MetricsFactory;
import io.helidon.metrics.api.Tag;
import io.helidon.metrics.api.Timer;
import io.helidon.service.registry.Services;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static com.example.payments.lifecycle.ShutdownTests.matchesPattern;
import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

class PhaseClockTest {

    // The process-wide registry, as in the service; the meters created here are removed after each test.
    private final MeterRegistry meters = Services.get(MetricsFactory.class).globalRegistry();

    @AfterEach
    void removeShutdownMeters() {
        meters.meters().stream().filter(meter -> meter.id().name().equals("shutdown_duration"))
                .forEach(meters::remove);
    }

    @Test
    void eachPhaseIsRecordedTheMomentItEnds() throws Exception {
        PhaseClock clock = new PhaseClock(meters, System.nanoTime());
        clock.run("pre-drain", () -> Thread.sleep(20));
        assertThat("recorded before the next phase starts", count("pre-drain"), is(1L));
        clock.run("drain", () -> { });
        clock.recordTotal();

        assertThat(count("drain"), is(1L));
        assertThat(count("total"), is(1L));
        assertThat(clock.summary(), matchesPattern("pre-drain=\\d+ ms, drain=\\d+ ms, total=\\d+ ms"));
    }

    @Test
    void aPhaseThatFailsIsRecordedAndTheSequenceGoesOn() throws Exception {
        PhaseClock clock = new PhaseClock(meters, System.nanoTime());
        clock.run("key-release", () -> {
            throw new IllegalStateException("store bug");
        });
        clock.run("cleanup", () -> { });

        assertThat(count("key-release"), is(1L));
        assertThat(clock.current(), is("cleanup"));
    }

    @Test
    void theHardDeadlineCanNameTheStepRunningNow() throws Exception {
        PhaseClock clock = new PhaseClock(meters, System.nanoTime());
        assertThat(clock.current(), is("signal"));
        clock.enter("metrics-linger");
        assertThat(clock.current(), is("metrics-linger"));
    }

    private long count(String phase) {
        return meters.timer("shutdown_duration", List.of(Tag.create("phase", phase))).map(Timer::count).orElse(0L);
    }
}
