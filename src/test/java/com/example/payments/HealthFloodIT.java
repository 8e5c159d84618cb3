package com.example.payments;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Map;

import com.example.payments.testing.HealthFlood;
import com.example.payments.testing.ServiceProcess;
import com.example.payments.testing.TestCredentials;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.greaterThanOrEqualTo;
import static org.hamcrest.Matchers.is;

/**
 * The kubelet's liveness probe is answered while others hold the health listener's connections: twice the configured
 * cap held by idle and half-sent connections, reopened as the server closes them, alone and while 64 clients saturate
 * the business port of a JVM on one CPU. Any pod the NetworkPolicy admits could otherwise get this pod restarted.
 *
 * <p>Each scenario runs for {@code -Dhealth-flood.seconds} (default 8, to keep {@code ./mvnw verify} short);
 * {@code load-tests/health-flood/run.sh} runs them for 30 s and, with {@code -Dhealth-flood.report=FILE}, appends each
 * scenario's per-probe latencies to that file.
 */
class HealthFloodIT {

    private static final int HEALTH_CAP = 32;
    private static final int BUSINESS_CLIENTS = 64;
    private static final Duration RUN = Duration.ofSeconds(Long.getLong("health-flood.seconds", 8));

    @Test
    void idleAndHalfSentConnectionsAtTwiceTheHealthCapLeaveEveryProbeAnswered() throws Exception {
        try (ServiceProcess service = ServiceProcess.start(Map.of("health-server.max-tcp-connections",
                                                                  String.valueOf(HEALTH_CAP)))) {
            service.awaitReady(Duration.ofSeconds(30));
            HealthFlood.Result result = HealthFlood.run(service.healthPort(), 2 * HEALTH_CAP, service.businessPort(), 0,
                                                        TestCredentials.HEADER_LINE, RUN);
            report("idle and half-sent connections at twice the health cap (" + 2 * HEALTH_CAP + ")", result);

            assertThat("one probe a second", result.probes().size(), greaterThanOrEqualTo((int) RUN.toSeconds() - 1));
            assertThat(result.summary(), result.failed(), is(empty()));
            assertThat("the holders held and reopened", result.holderOpens(), greaterThanOrEqualTo(2L * HEALTH_CAP));
        }
    }

    @Test
    void theSameFloodWhileBusinessClientsSaturateOneCpuLeavesEveryProbeAnsweredFromTheFirstSecond()
            throws Exception {
        try (ServiceProcess service = ServiceProcess.startOnOneCpu(Map.of("health-server.max-tcp-connections",
                                                                          String.valueOf(HEALTH_CAP)))) {
            service.awaitReady(Duration.ofSeconds(60));
            HealthFlood.Result result = HealthFlood.run(service.healthPort(), 2 * HEALTH_CAP, service.businessPort(),
                                                        BUSINESS_CLIENTS, TestCredentials.HEADER_LINE, RUN);
            report("the same, and " + BUSINESS_CLIENTS + " business clients, the JVM on one CPU", result);

            assertThat("one probe a second", result.probes().size(), greaterThanOrEqualTo((int) RUN.toSeconds() - 1));
            assertThat(result.summary(), result.failed(), is(empty()));
            assertThat("the business port was saturated", result.businessAnswers(), greaterThan(0L));
        }
    }

    private static void report(String scenario, HealthFlood.Result result) throws IOException {
        System.out.println("HealthFloodIT " + scenario + ": " + result.summary());
        String file = System.getProperty("health-flood.report");
        if (file == null || file.isBlank()) {
            return;
        }
        StringBuilder text = new StringBuilder("\n## ").append(scenario).append("\n\n")
                .append(RUN.toSeconds()).append(" s, one probe a second (1 s timeout). ")
                .append(result.summary()).append(".\n\n| probe sent at | status | latency |\n|---|---|---|\n");
        for (HealthFlood.Probe probe : result.probes()) {
            text.append(String.format(java.util.Locale.ROOT, "| %.1f s | %s | %.1f ms |%n", probe.sentMillis() / 1000.0,
                                      probe.status() == 0 ? "no answer: " + probe.failure() : probe.status(),
                                      probe.latencyNanos() / 1e6));
        }
        Files.writeString(Path.of(file), text, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }
}
