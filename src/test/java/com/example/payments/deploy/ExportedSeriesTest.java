package com.example.payments.deploy;

import java.util.Set;

import com.example.payments.testing.MetricsScrape;

import org.junit.jupiter.api.Test;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.is;

/**
 * The judge of dashboard and alert expressions, on a scrape shaped like the service's: it refuses what the service
 * does not export and never what it exports besides.
 */
class ExportedSeriesTest {

    private static final String SCRAPE = """
            # TYPE idempotency_requests_total counter
            idempotency_requests_total{outcome="new",scope="application",} 3.0
            idempotency_requests_total{outcome="replayed",scope="application",} 1.0
            # TYPE shutdown_duration_seconds histogram
            shutdown_duration_seconds_bucket{phase="total",scope="application",le="0.5",} 1.0
            shutdown_duration_seconds_count{phase="total",scope="application",} 1.0
            health_probe_success{probe="readiness",scope="application",} 1.0
            """;
    private static final String RECORDED = "payments_authorization:termination_grace_period_seconds";

    private final ExportedSeries exported = ExportedSeries.of(MetricsScrape.parse(SCRAPE), Set.of(RECORDED));

    @Test
    void exportedSeriesWithTheirLabelsTargetLabelsAndRecordingRulesPass() {
        assertThat(exported.problems("histogram_quantile(0.99, sum by (phase, le, pod) (rate("
                                     + "shutdown_duration_seconds_bucket{scope=\"application\", phase=\"total\", "
                                     + "environment=\"$environment\", pod=~\"$pod\"}[5m])))"
                                     + " > on (environment) " + RECORDED + "{environment=\"prod\"}"), is(empty()));
    }

    @Test
    void aMetricTheServiceAddsLaterNeverMakesAProblem() {
        ExportedSeries more = ExportedSeries.of(MetricsScrape.parse(SCRAPE + "auth_failures_total{reason=\"x\"} 1\n"),
                                                Set.of());

        assertThat(more.problems("sum by (outcome) (rate(idempotency_requests_total[5m]))"), is(empty()));
    }

    @Test
    void aMetricTheServiceDoesNotExportIsNamedWithTheExportedOnesLikeIt() {
        assertThat(exported.problems("rate(idempotency_request_total[5m])"),
                   contains("idempotency_request_total is not exported by the service; exported: "
                            + "[idempotency_requests_total]"));
    }

    @Test
    void aHistogramNameWithoutItsSampleSuffixIsNotExported() {
        assertThat(exported.problems("shutdown_duration_seconds{phase=\"total\"}"), hasSize(1));
    }

    @Test
    void aLabelTheSeriesDoNotCarryIsAProblem() {
        assertThat(exported.problems("idempotency_requests_total{result=\"new\"}").getFirst(),
                   containsString("has no label result"));
    }

    @Test
    void anExactValueNoSeriesHasIsAProblemButPatternsAndVariablesAreNotJudged() {
        assertThat(exported.problems("idempotency_requests_total{outcome=\"replay\"}").getFirst(),
                   containsString("values of outcome: [new, replayed]"));
        assertThat(exported.problems("idempotency_requests_total{outcome=~\"replay.*\", outcome!=\"x\"}"), is(empty()));
        assertThat(exported.problems("idempotency_requests_total{outcome=\"$outcome\"}"), is(empty()));
    }

    @Test
    void aGroupingLabelNoSelectedSeriesCarriesIsAProblem() {
        assertThat(exported.problems("sum by (route) (idempotency_requests_total)").getFirst(),
                   containsString("grouping label route"));
    }

    @Test
    void aSelectorWithoutAMetricNameIsAProblem() {
        assertThat(exported.problems("{__name__=~\"idempotency_.*\"}").getFirst(), containsString("names no metric"));
    }
}
