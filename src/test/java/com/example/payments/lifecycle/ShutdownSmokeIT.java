package com.example.payments.lifecycle;

import java.time.Duration;
import java.util.Map;

import com.example.payments.testing.Http;
import com.example.payments.testing.ServiceProcess;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;

class ShutdownSmokeIT {

    @Test
    void sigtermOnAnIdleServiceExitsWithStatusZero() throws Exception {
        try (ServiceProcess service = ServiceProcess.start(Map.of())) {
            assertThat(Http.get("http://127.0.0.1:" + service.businessPort() + "/ping").body(), is("pong"));
            service.signal("TERM");
            assertThat(service.awaitExit(Duration.ofSeconds(20)), is(0));
        }
    }
}
