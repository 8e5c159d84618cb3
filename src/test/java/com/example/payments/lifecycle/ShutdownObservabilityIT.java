package com.example.payments.lifecycle;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.example.payments.testing.MetricsScrape;
import com.example.payments.testing.ServiceProcess;
import com.example.payments.testing.Timeline;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static com.example.payments.lifecycle.ShutdownTests.EXIT;
import static com.example.payments.lifecycle.ShutdownTests.awaitMetric;
import static com.example.payments.lifecycle.ShutdownTests.config;
import static com.example.payments.lifecycle.ShutdownTests.finish;
import static com.example.payments.lifecycle.ShutdownTests.join;
import static com.example.payments.lifecycle.ShutdownTests.matchesPattern;
import static com.example.payments.lifecycle.ShutdownTests.postAsync;
import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;

/**
 * The shutdown tells its story: one log line per phase with its duration and a summary, in the text and the JSON
 * format, and {@code shutdown_duration_seconds{phase}} on {@code /metrics} while the health listener lingers.
 */
class ShutdownObservabilityIT {

    private static final String SEQUENCE_LOGGER = "com.example.payments.lifecycle.ShutdownSequence";
    private static final List<String> STORY = List.of(
            "SIGTERM received: draining, readiness answers 503",
            "Shutdown phase pre-drain done in ",
            "Shutdown phase drain: business listener stops accepting; 1 requests in flight",
            "Shutdown phase drain done in ",
            "Shutdown phase key-release: 0 idempotency keys still held IN_FLIGHT",
            "Shutdown phase key-release done in ",
            "Shutdown phase cleanup: stopping 3 workers, closing ",
            "Shutdown phase cleanup done in ",
            "Shutdown summary: ",
            "Health listener closed; exiting with status 0");
    private static final List<String> PHASES = List.of("pre-drain", "drain", "key-release", "cleanup", "total");

    @ParameterizedTest
    @ValueSource(strings = {"text", "json"})
    void everyPhaseIsLoggedAndScrapedDuringTheMetricsLinger(String format) throws Exception {
        Timeline timeline = Timeline.create("shutdown-story-" + format);
        Map<String, String> config = config("logging.format", format, "shutdown.pre-drain-delay", "PT0.5S",
                                            "shutdown.drain-timeout", "PT2S", "shutdown.cleanup-timeout", "PT1S",
                                            "shutdown.metrics-linger", "PT2S", "shutdown.hard-deadline", "PT8S",
                                            "authorizer.timeout", "PT1.5S", "authorizer.simulated-latency", "PT1S");
        try (ServiceProcess service = ServiceProcess.start(config)) {
            service.awaitReady(EXIT);
            var post = postAsync(service.businessPort(), "story-" + format, timeline, "post");
            awaitMetric(service, "http_in_flight_requests", Map.of(), 1);
            service.signal("TERM");
            timeline.signalSent("TERM");
            service.awaitLine(line -> line.contains("Shutdown summary"), Duration.ofSeconds(10));
            timeline.add("test", "scrape /metrics");
            MetricsScrape metrics = MetricsScrape.of(service.healthPort());
            int exit = service.awaitExit(EXIT);
            finish(timeline, service);

            assertThat(exit, is(0));
            assertThat(join(post).status(), is(201));
            List<String> messages = "json".equals(format) ? jsonMessages(service) : textMessages(service);
            int next = 0;
            for (String message : messages) {
                if (next < STORY.size() && message.startsWith(STORY.get(next))) {
                    next++;
                }
            }
            assertThat("the story in order; missing from: " + (next < STORY.size() ? STORY.get(next) : "")
                       + "\n" + String.join("\n", messages), next, is(STORY.size()));
            String summary = messages.stream().filter(m -> m.startsWith("Shutdown summary: ")).findFirst().orElseThrow();
            assertThat(summary, matchesPattern("Shutdown summary: pre-drain=\\d+ ms, drain=\\d+ ms, key-release=\\d+ ms, "
                                               + "cleanup=\\d+ ms, total=\\d+ ms; requests cut off by the drain timeout: "
                                               + "0; idempotency keys released: 0; abandoned at the cleanup timeout: "
                                               + "none"));

            for (String phase : PHASES) {
                Map<String, String> tag = Map.of("phase", phase);
                assertThat(phase, metrics.sum("shutdown_duration_seconds_count", tag), is(1.0));
                assertThat(phase, metrics.sum("shutdown_duration_seconds_bucket", Map.of("phase", phase, "le", "+Inf")),
                           is(1.0));
            }
            assertThat(metrics.sum("shutdown_duration_seconds_sum", Map.of("phase", "pre-drain")), greaterThan(0.45));
            assertThat("the drain waited for the POST", metrics.sum("shutdown_duration_seconds_sum",
                                                                    Map.of("phase", "drain")), greaterThan(0.1));
            assertThat("nothing in flight once drained", metrics.samples().stream()
                    .filter(sample -> sample.name().equals("http_in_flight_requests")).map(MetricsScrape.Sample::value)
                    .toList(), is(List.of(0.0)));
        }
    }

    private static List<String> jsonMessages(ServiceProcess service) throws Exception {
        ObjectMapper mapper = new ObjectMapper();
        List<String> messages = new ArrayList<>();
        boolean started = false;
        for (String line : service.output()) {
            started |= line.contains("serving business traffic");
            if (!started) {
                continue;
            }
            JsonNode json = mapper.readTree(line);
            assertThat(line, json.path("@timestamp").asText(), matchesPattern("\\d{4}-\\d\\d-\\d\\dT.*Z"));
            if (json.path("log.logger").asText().equals(SEQUENCE_LOGGER)) {
                assertThat(line, json.path("log.level").asText(), matchesPattern("INFO|WARN|ERROR"));
                messages.add(json.path("message").asText());
            }
        }
        return messages;
    }

    private static List<String> textMessages(ServiceProcess service) {
        String marker = " " + SEQUENCE_LOGGER + ": ";
        return service.output().stream().filter(line -> line.contains(marker))
                .map(line -> line.substring(line.indexOf(marker) + marker.length())).toList();
    }
}
