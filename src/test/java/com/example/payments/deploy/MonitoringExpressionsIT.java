package com.example.payments.deploy;

import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import com.example.payments.testing.Http;
import com.example.payments.testing.MetricsScrape;
import com.example.payments.testing.ServiceProcess;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Every PromQL expression that the monitoring component ships, in the Grafana dashboard (panel targets and variable
 * queries) and in the PrometheusRule (alerts and recording rules), selects only series that the packaged service
 * really exports, with labels and exact label values it really has.
 *
 * <p>The judge is one real scrape of the jar, taken where every series exists: after a new authorization, its replay,
 * a decline, an issuer failure, a GET and each probe (series that appear with their first request), and after
 * SIGTERM, during {@code shutdown.metrics-linger} (when {@code shutdown_duration_seconds} holds the shutdown just
 * made). A metric the service exports but no expression uses is fine; an expression naming something the scrape
 * lacks fails, naming the expression, where it is, and what the service exports instead.
 */
class MonitoringExpressionsIT {

    private static final Duration DEADLINE = Duration.ofSeconds(30);
    private static final String DECLINING_CARD = "4000000000000002";
    private static final String UNREACHABLE_ISSUER_CARD = "4000000000000119";

    private static MetricsScrape scrape;

    @BeforeAll
    static void scrapeTheServiceAfterTrafficAndDuringItsMetricsLinger() throws Exception {
        try (ServiceProcess service = ServiceProcess.start(Map.of("shutdown.metrics-linger", "PT5S"))) {
            service.awaitReady(DEADLINE);
            String business = "http://127.0.0.1:" + service.businessPort();
            String health = "http://127.0.0.1:" + service.healthPort();

            HttpResponse<String> created = Http.post(business + "/v1/authorizations", "first", Http.VALID_BODY);
            assertEquals(201, created.statusCode(), created.body());
            HttpResponse<String> replayed = Http.post(business + "/v1/authorizations", "first", Http.VALID_BODY);
            assertEquals("true", replayed.headers().firstValue("Idempotent-Replayed").orElse(""), replayed.body());
            String location = created.headers().firstValue("Location").orElseThrow();
            assertEquals(200, Http.get(business + location).statusCode());
            assertEquals(201, Http.post(business + "/v1/authorizations", "declined",
                                        Http.VALID_BODY.replace("4111111111111111", DECLINING_CARD)).statusCode());
            assertEquals(502, Http.post(business + "/v1/authorizations", "unreachable",
                                        Http.VALID_BODY.replace("4111111111111111", UNREACHABLE_ISSUER_CARD)).statusCode());
            for (String probe : List.of("/health/live", "/health/ready", "/health/startup", "/health")) {
                assertEquals(200, Http.get(health + probe).statusCode(), probe);
            }

            // jvm_gc_pause_* appears with the first collection: a start that allocated little (a child on the AOT
            // cache) may not have had one yet. A pod's dashboard shows it from its first pause; here, force one.
            collectGarbage(service.pid());
            service.signal("TERM");
            scrape = awaitShutdownRecorded(service.healthPort());
            assertEquals(0, service.awaitExit(DEADLINE), "exit status after SIGTERM");
        }
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#productionLike")
    void everyDashboardAndAlertExpressionSelectsSeriesTheServiceExports(String environment) {
        RenderedOverlay overlay = RenderedOverlay.of(environment);
        ExportedSeries exported = ExportedSeries.of(scrape, recordingRules(overlay));
        List<String> problems = new ArrayList<>();
        List<GrafanaDashboard.Query> queries = new ArrayList<>(GrafanaDashboard.queries(GrafanaDashboard.of(overlay)));
        for (Map<String, Object> rule : MonitoringManifestsTest.rules(overlay)) {
            Object name = rule.containsKey("alert") ? rule.get("alert") : rule.get("record");
            queries.add(new GrafanaDashboard.Query("PrometheusRule " + name, String.valueOf(rule.get("expr"))));
        }

        for (GrafanaDashboard.Query query : queries) {
            exported.problems(query.expr()).forEach(p -> problems.add(query.where() + ": " + p + "\n    " + query.expr()));
        }

        assertThat(queries.size(), greaterThan(20));
        assertThat(environment + ": expressions the service cannot answer", problems, is(empty()));
    }

    @Test
    void theScrapeHoldsTheSeriesThatAppearOnlyWithTrafficAndShutdown() {
        assertThat(scrape.sum("idempotency_requests_total", Map.of("outcome", "replayed")), is(1.0));
        assertThat(scrape.sum("authorizer_duration_seconds_count", Map.of("outcome", "unknown")), is(1.0));
        assertThat(scrape.sum("shutdown_duration_seconds_count", Map.of("phase", "total")), is(1.0));
    }

    private static void collectGarbage(long pid) throws Exception {
        Path java = Path.of(ProcessHandle.current().info().command().orElseThrow());
        Process jcmd = new ProcessBuilder(java.resolveSibling("jcmd").toString(), String.valueOf(pid), "GC.run")
                .redirectErrorStream(true).start();
        String output = new String(jcmd.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, jcmd.waitFor(), () -> "jcmd " + pid + " GC.run: " + output);
    }

    private static Set<String> recordingRules(RenderedOverlay overlay) {
        return MonitoringManifestsTest.rules(overlay).stream().filter(rule -> rule.containsKey("record"))
                .map(rule -> String.valueOf(rule.get("record"))).collect(Collectors.toSet());
    }

    private static MetricsScrape awaitShutdownRecorded(int healthPort) throws InterruptedException {
        long end = System.nanoTime() + DEADLINE.toNanos();
        while (System.nanoTime() < end) {
            try {
                MetricsScrape during = MetricsScrape.of(healthPort);
                if (during.sum("shutdown_duration_seconds_count", Map.of("phase", "total")) >= 1) {
                    return during;
                }
            } catch (IOException e) {
                // the health listener is up until the linger ends; retry
            }
            Thread.sleep(50);
        }
        throw new AssertionError("no scrape during the metrics linger showed the shutdown");
    }
}
