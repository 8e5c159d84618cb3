package com.example.payments;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;

import com.example.payments.testing.Http;
import com.example.payments.testing.ServiceProcess;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.greaterThanOrEqualTo;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.lessThan;

/**
 * The packaged jar under a flood of refused requests (a caller with a wrong API key): the WARN line each refusal
 * writes is rate-limited (Log4j's {@code BurstFilter} in {@code log4j2.xml}: at most 100 in any 10 s), while every
 * refusal is still access-logged and counted in {@code auth_failures_total}.
 */
class RefusalLogFloodIT {

    private static final int REQUESTS = 400;

    @Test
    void aFloodOfRefusalsWritesABurstOfWarningsButEveryAccessLogLineAndEveryCount() throws Exception {
        try (ServiceProcess service = ServiceProcess.start(Map.of("logging.format", "json"))) {
            service.awaitReady(Duration.ofSeconds(30));
            String api = "http://127.0.0.1:" + service.businessPort() + "/v1/authorizations";
            long started = System.nanoTime();
            for (int i = 0; i < REQUESTS; i++) {
                HttpResponse<String> refused = Http.post(api, "flood-" + i, Http.VALID_BODY, "Bearer wrong-key-" + i);
                assertThat(refused.body(), refused.statusCode(), is(401));
            }
            long seconds = Duration.ofNanos(System.nanoTime() - started).toSeconds() + 1;
            awaitAccessLines(service, REQUESTS);

            long warnings = service.output().stream().filter(line -> line.contains("Authentication failed")).count();
            assertThat("a burst of warnings", warnings, greaterThanOrEqualTo(100L));
            assertThat("at most 100 per 10 s; flood sent in " + seconds + " s", warnings,
                       lessThan(Math.min(REQUESTS, 100 + 10 * seconds + 10)));
            String metrics = Http.get("http://127.0.0.1:" + service.healthPort() + "/metrics").body();
            double counted = metrics.lines().filter(line -> line.startsWith("auth_failures_total{"))
                    .mapToDouble(line -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1))).sum();
            assertThat(counted, is((double) REQUESTS));
        }
    }

    private static long accessLines(ServiceProcess service) {
        return service.output().stream()
                .filter(line -> line.contains("\"log.logger\":\"com.example.payments.observability.AccessLog\""))
                .filter(line -> line.contains("\"http.response.status_code\":401")
                                || line.contains("\"http.response.status_code\":\"401\""))
                .count();
    }

    private static void awaitAccessLines(ServiceProcess service, int expected) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (accessLines(service) < expected && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertThat("every refusal access-logged", accessLines(service), is((long) expected));
    }
}
