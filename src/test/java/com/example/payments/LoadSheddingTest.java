package com.example.payments;

import java.net.http.HttpResponse;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import com.example.payments.testing.Http;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;

/**
 * Load shedding ({@code server.max-concurrent-requests}) answers a problem with Retry-After, and a busy business
 * listener does not look wedged to the loopback prober.
 */
class LoadSheddingTest {

    @Test
    void beyondMaxConcurrentRequestsTheBusinessListenerShedsWithAProblem() throws Exception {
        try (TestService service = TestService.start(Map.of("server.max-concurrent-requests", "1",
                                                            "authorizer.simulated-latency", "PT1.5S"))) {
            CompletableFuture<HttpResponse<String>> slow = CompletableFuture.supplyAsync(() -> {
                try {
                    return service.post("slow", Http.VALID_BODY);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            Thread.sleep(500);
            HttpResponse<String> shed = service.post("shed", Http.VALID_BODY);
            assertThat(shed.statusCode(), is(503));
            assertThat(shed.headers().firstValue("Content-Type").orElseThrow(), is("application/problem+json"));
            assertThat(shed.headers().firstValue("Retry-After").orElseThrow(), is("1"));
            assertThat(shed.body(), containsString("overloaded"));
            // While saturated, the health port still answers and liveness stays 200.
            assertThat(service.get(service.health("/health/live")).statusCode(), is(200));
            assertThat(slow.get().statusCode(), is(201));
        }
    }
}
