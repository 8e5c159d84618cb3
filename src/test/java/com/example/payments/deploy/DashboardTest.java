package com.example.payments.deploy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.ConfigMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.yaml.snakeyaml.Yaml;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.is;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Grafana dashboard of the monitoring component: shipped by {@code kubectl apply -k} to Grafana's dashboard
 * sidecar, well-formed, every query through the datasource variable and filtered to the chosen environment and pods,
 * every expression valid PromQL for promtool. That its metric names exist is {@link MonitoringExpressionsIT}'s job.
 */
class DashboardTest {

    private static final Path SOURCE = Path.of("k8s/components/monitoring/dashboards/payments-authorization.json");
    private static final String DATASOURCE = "${datasource}";
    private static final String RECORDING_PREFIX = "payments_authorization:";
    private static final int GRID_COLUMNS = 24;

    /** One metric per subject the dashboard must show: traffic, idempotency, authorizer, issuer, health. */
    private static final Set<String> SUBJECTS = Set.of(
            "http_server_request_duration_seconds_count", "http_server_request_duration_seconds_bucket",
            "http_in_flight_requests", "idempotency_requests_total", "idempotency_keys_released_total",
            "authorizations_total", "authorizer_invocations_total", "authorizer_duration_seconds_bucket",
            "issuer_authorizations_total", "issuer_duplicate_attempts_total",
            "issuer_payments_approved_more_than_once_total", "health_probe_success", "readiness_consecutive_failures",
            "circuit_breaker_threshold", "worker_heartbeat_age_seconds", "shutdown_duration_seconds_bucket");

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#productionLike")
    void productionLikeOverlaysShipTheDashboardToTheGrafanaSidecar(String environment) throws IOException {
        List<ConfigMap> dashboards = GrafanaDashboard.configMaps(RenderedOverlay.of(environment));

        assertEquals(1, dashboards.size(), "ConfigMaps labelled grafana_dashboard: \"1\"");
        ConfigMap configMap = dashboards.getFirst();
        // A hash suffix would leave the previous version's ConfigMap (same dashboard uid) behind on every change.
        assertEquals("payments-authorization-dashboard", configMap.getMetadata().getName());
        assertEquals(Map.of("payments-authorization.json", Files.readString(DeployTools.projectRoot().resolve(SOURCE))),
                     configMap.getData());
    }

    @Test
    void devLeavesTheMonitoringComponentOut() {
        RenderedOverlay dev = RenderedOverlay.of("dev");

        assertThat(GrafanaDashboard.configMaps(dev), is(empty()));
        assertTrue(dev.custom("PodMonitor").isEmpty() && dev.custom("PrometheusRule").isEmpty(),
                   "laptop clusters rarely run the Prometheus operator: dev must not need its CRDs");
    }

    @Test
    void theDashboardHasAStableUidAndADatasourceVariableThatEveryQueryVariableUses() {
        JsonNode dashboard = GrafanaDashboard.of(RenderedOverlay.of("prod"));

        assertEquals("payments-authorization", dashboard.path("uid").asText());
        assertFalse(dashboard.path("title").asText().isBlank(), "title");
        assertTrue(dashboard.path("schemaVersion").isInt(), "schemaVersion");
        assertTrue(dashboard.path("id").isMissingNode() || dashboard.path("id").isNull(),
                   "no numeric id: Grafana assigns one per instance");
        List<String> variables = new ArrayList<>();
        for (JsonNode variable : dashboard.path("templating").path("list")) {
            variables.add(variable.path("name").asText());
            if ("datasource".equals(variable.path("type").asText())) {
                assertEquals("prometheus", variable.path("query").asText());
            } else {
                assertEquals(DATASOURCE, variable.path("datasource").path("uid").asText(), variable.toString());
            }
        }
        assertThat(variables, is(List.of("datasource", "environment", "pod")));
    }

    @Test
    void panelsHaveUniqueIdsTargetsThroughTheDatasourceVariableAndDoNotOverlap() {
        List<JsonNode> panels = GrafanaDashboard.panels(GrafanaDashboard.of(RenderedOverlay.of("prod")));
        Set<Integer> ids = new HashSet<>();
        List<int[]> areas = new ArrayList<>();

        for (JsonNode panel : panels) {
            String title = panel.path("title").asText();
            assertTrue(panel.path("id").isInt() && ids.add(panel.path("id").asInt()), () -> "duplicate id: " + title);
            JsonNode grid = panel.path("gridPos");
            int x = grid.path("x").asInt();
            int w = grid.path("w").asInt();
            assertTrue(w > 0 && grid.path("h").asInt() > 0 && x >= 0 && x + w <= GRID_COLUMNS,
                       () -> title + ": gridPos " + grid);
            areas.add(new int[] {x, grid.path("y").asInt(), w, grid.path("h").asInt()});
            if (GrafanaDashboard.isRow(panel)) {
                continue;
            }
            assertFalse(title.isBlank(), () -> "panel " + panel.path("id") + " has no title");
            assertFalse(panel.path("description").asText().isBlank(), () -> title + ": say what the panel shows");
            assertEquals(DATASOURCE, panel.path("datasource").path("uid").asText(), title);
            assertTrue(panel.path("targets").size() > 0, () -> title + " has no targets");
            Set<String> refIds = new HashSet<>();
            for (JsonNode target : panel.path("targets")) {
                assertTrue(refIds.add(target.path("refId").asText()), () -> title + ": duplicate refId");
                assertFalse(target.path("expr").asText().isBlank(), () -> title + ": target without expr");
                if (target.has("datasource")) {
                    assertEquals(DATASOURCE, target.path("datasource").path("uid").asText(), title);
                }
            }
        }
        for (int i = 0; i < areas.size(); i++) {
            for (int j = i + 1; j < areas.size(); j++) {
                int index = i;
                int other = j;
                assertFalse(overlap(areas.get(i), areas.get(j)),
                            () -> panels.get(index).path("title") + " overlaps " + panels.get(other).path("title"));
            }
        }
    }

    @Test
    void everyServiceSeriesIsFilteredToTheChosenEnvironmentAndPods() {
        for (GrafanaDashboard.Query query : GrafanaDashboard.queries(GrafanaDashboard.of(RenderedOverlay.of("prod")))) {
            if (query.where().startsWith("variable")) {
                continue;
            }
            for (PromQl.Selector selector : PromQl.parse(query.expr()).selectors()) {
                List<String> matchers = selector.matchers().stream().map(PromQl.LabelMatcher::toString).toList();
                assertThat(query.where(), matchers, hasItem("environment=\"$environment\""));
                if (!String.valueOf(selector.metric()).startsWith(RECORDING_PREFIX)) {
                    assertThat(query.where(), matchers, hasItem("scope=\"application\""));
                    assertThat(query.where(), matchers, hasItem("pod=~\"$pod\""));
                }
            }
        }
    }

    @Test
    void everySubjectOfTheServiceHasAPanel() {
        Set<String> shown = new TreeSet<>();
        for (GrafanaDashboard.Query query : GrafanaDashboard.queries(GrafanaDashboard.of(RenderedOverlay.of("prod")))) {
            PromQl.parse(query.expr()).selectors().forEach(selector -> shown.add(selector.metric()));
        }

        assertThat("subjects without a panel", missing(shown), is(empty()));
    }

    @Test
    void everyExpressionIsValidPromQlForPromtool(@TempDir Path dir) throws IOException {
        Path promtool = DeployTools.require(DeployTools.Tool.PROMTOOL);
        List<Map<String, Object>> rules = new ArrayList<>();
        for (GrafanaDashboard.Query query : GrafanaDashboard.queries(GrafanaDashboard.of(RenderedOverlay.of("prod")))) {
            Map<String, Object> rule = new LinkedHashMap<>();
            rule.put("record", "dashboard:query_" + rules.size());
            rule.put("expr", withGrafanaVariablesResolved(query.expr()));
            rules.add(rule);
        }
        Files.writeString(dir.resolve("dashboard.yaml"), new Yaml().dump(
                Map.of("groups", List.of(Map.of("name", "dashboard", "rules", rules)))));

        DeployTools.Result result = DeployTools.run(dir, List.of(promtool.toString(), "check", "rules", "dashboard.yaml"));

        assertEquals(0, result.exitCode(), () -> "promtool check rules on the dashboard's expressions:\n"
                                                  + result.stdout() + result.stderr());
    }

    /** Grafana replaces its variables before Prometheus sees the query: ranges by durations, the rest by values. */
    static String withGrafanaVariablesResolved(String expr) {
        return expr.replaceAll("\\[\\$\\{?__\\w+}?]", "[5m]").replaceAll("\\$\\{?(\\w+)(:\\w+)?}?", "$1");
    }

    private static Set<String> missing(Set<String> shown) {
        Set<String> missing = new TreeSet<>(SUBJECTS);
        missing.removeAll(shown);
        return missing;
    }

    private static boolean overlap(int[] a, int[] b) {
        return a[0] < b[0] + b[2] && b[0] < a[0] + a[2] && a[1] < b[1] + b[3] && b[1] < a[1] + a[3];
    }
}
