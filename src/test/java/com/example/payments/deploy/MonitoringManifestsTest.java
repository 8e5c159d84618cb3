package com.example.payments.deploy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.hasItem;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The PodMonitor and PrometheusRule of staging and prod against the Deployment and config they watch. The alert
 * expressions themselves are exercised by {@link PrometheusRulesTest}; their series names against a real scrape by
 * {@link ExportedMetricsTest}.
 */
class MonitoringManifestsTest {

    /** Series the rules may select: exactly what the service exports on /metrics. */
    static final Set<String> EXPORTED_SERIES = Set.of("shutdown_duration_seconds_bucket", "health_probe_success",
                                                      "readiness_consecutive_failures", "circuit_breaker_threshold",
                                                      "http_server_request_duration_seconds_count",
                                                      "http_server_request_duration_seconds_bucket",
                                                      "issuer_payments_approved_more_than_once_total",
                                                      "jvm_memory_usage_after_gc", "jvm_gc_overhead",
                                                      "unknown_outcomes_overdue");

    private static final Pattern SELECTOR = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)\\{([^}]*)}");
    private static final String RECORDING_PREFIX = "payments_authorization:";

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#productionLike")
    void alertRulesCarryThisEnvironmentsGracePeriodAndPreStop(String environment) {
        RenderedOverlay overlay = RenderedOverlay.of(environment);
        long grace = overlay.deployment().getSpec().getTemplate().getSpec().getTerminationGracePeriodSeconds();
        long preStop = GraceArithmetic.preStopSeconds(environment, overlay);

        Map<String, Object> graceRule = recordingRule(overlay, "termination_grace_period_seconds");
        Map<String, Object> preStopRule = recordingRule(overlay, "prestop_sleep_seconds");

        assertEquals(String.valueOf(grace), String.valueOf(graceRule.get("expr")));
        assertEquals(String.valueOf(preStop), String.valueOf(preStopRule.get("expr")));
        assertEquals(Map.of("environment", environment), graceRule.get("labels"));
        assertEquals(Map.of("environment", environment), preStopRule.get("labels"));
        assertEquals(environment, overlay.deployment().getSpec().getTemplate().getMetadata().getLabels()
                .get("environment"), "the pods carry the label the PodMonitor copies onto every series");
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#productionLike")
    void podMonitorScrapesTheHealthPortOnceMoreWithinTheMetricsLinger(String environment) {
        RenderedOverlay overlay = RenderedOverlay.of(environment);
        Map<String, Object> spec = spec(overlay, "PodMonitor");
        Map<String, Object> endpoint = list(spec.get("podMetricsEndpoints")).getFirst();
        Duration interval = Duration.parse("PT" + endpoint.get("interval").toString().toUpperCase());
        Duration linger = EnvironmentConfig.of(overlay).duration("shutdown.metrics-linger");

        assertEquals("health", endpoint.get("port"));
        assertEquals("/metrics", endpoint.get("path"));
        assertEquals(Duration.ofSeconds(5), interval);
        assertTrue(linger.compareTo(interval) > 0,
                   () -> environment + ": shutdown.metrics-linger " + linger + " must exceed the scrape interval "
                         + interval + ", or no scrape sees shutdown_duration_seconds");
        assertThat(list(spec.get("podTargetLabels")).toString(), containsString("environment"));
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#productionLike")
    void alertsSelectOnlyExportedSeriesWithTheApplicationScope(String environment) {
        Set<String> selected = new TreeSet<>();
        for (Selector selector : selectors(RenderedOverlay.of(environment))) {
            selected.add(selector.name());
            if (!ExportedSeries.PROMETHEUS_SERIES.contains(selector.name())) {
                assertThat(selector.toString(), selector.matchers(), containsString("scope=\"application\""));
            }
        }

        for (String name : selected) {
            assertTrue(EXPORTED_SERIES.contains(name) || name.startsWith(RECORDING_PREFIX)
                       || ExportedSeries.PROMETHEUS_SERIES.contains(name),
                       () -> environment + ": the rules select " + name + ", which the service does not export");
        }
        assertThat(selected, hasItem("shutdown_duration_seconds_bucket"));
    }

    /**
     * A series selector of a rule expression, e.g. {@code health_probe_success{probe="readiness",scope="application"}}.
     *
     * @param name     metric name
     * @param matchers label matchers between the braces
     */
    record Selector(String name, String matchers) {
        @Override
        public String toString() {
            return name + "{" + matchers + "}";
        }
    }

    /**
     * Every series selector with braces in the rules' expressions.
     *
     * @param overlay rendered overlay with a PrometheusRule
     * @return selectors in rule order
     */
    static List<Selector> selectors(RenderedOverlay overlay) {
        List<Selector> found = new ArrayList<>();
        for (Map<String, Object> rule : rules(overlay)) {
            Matcher selector = SELECTOR.matcher(String.valueOf(rule.get("expr")));
            while (selector.find()) {
                found.add(new Selector(selector.group(1), selector.group(2)));
            }
        }
        return found;
    }

    static List<Map<String, Object>> rules(RenderedOverlay overlay) {
        return list(spec(overlay, "PrometheusRule").get("groups")).stream()
                .flatMap(group -> MonitoringManifestsTest.list(group.get("rules")).stream()).toList();
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> spec(RenderedOverlay overlay, String kind) {
        GenericKubernetesResource resource = overlay.custom(kind)
                .orElseThrow(() -> new AssertionError("no " + kind + " rendered"));
        return (Map<String, Object>) resource.getAdditionalProperties().get("spec");
    }

    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> list(Object value) {
        return (List<Map<String, Object>>) value;
    }

    private static Map<String, Object> recordingRule(RenderedOverlay overlay, String name) {
        return rules(overlay).stream().filter(r -> (RECORDING_PREFIX + name).equals(r.get("record"))).findFirst()
                .orElseThrow(() -> new AssertionError("no recording rule " + RECORDING_PREFIX + name));
    }
}
