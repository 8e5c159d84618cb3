package com.example.payments.deploy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ConfigMap;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The Grafana dashboard as an overlay ships it: a ConfigMap labelled {@code grafana_dashboard: "1"} (the label
 * Grafana's dashboard sidecar watches) holding the dashboard JSON of {@code k8s/components/monitoring/dashboards/}.
 */
final class GrafanaDashboard {

    /** The label the Grafana sidecar selects dashboard ConfigMaps by, and its value. */
    static final Map.Entry<String, String> SIDECAR_LABEL = Map.entry("grafana_dashboard", "1");

    // Grafana's templating function: label_values(<series selector>, <label>).
    private static final Pattern LABEL_VALUES = Pattern.compile("(?s)^\\s*label_values\\((.*),\\s*(\\w+)\\s*\\)\\s*$");
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * A PromQL expression of the dashboard and where it is.
     *
     * @param where e.g. {@code panel 'Request rate by route' target A}
     * @param expr  the expression as Grafana sends it, with its variables
     */
    record Query(String where, String expr) {
    }

    private GrafanaDashboard() {
    }

    /**
     * The rendered ConfigMaps carrying the sidecar label.
     *
     * @param overlay rendered overlay
     * @return the dashboard ConfigMaps, empty when the overlay leaves the monitoring component out
     */
    static List<ConfigMap> configMaps(RenderedOverlay overlay) {
        return overlay.all(ConfigMap.class).stream()
                .filter(c -> c.getMetadata().getLabels() != null
                             && SIDECAR_LABEL.getValue().equals(c.getMetadata().getLabels().get(SIDECAR_LABEL.getKey())))
                .toList();
    }

    /**
     * The one dashboard the overlay ships, parsed.
     *
     * @param overlay rendered overlay with the monitoring component
     * @return the dashboard JSON
     * @throws AssertionError unless exactly one dashboard ConfigMap with one JSON document is rendered
     */
    static JsonNode of(RenderedOverlay overlay) {
        List<ConfigMap> configMaps = configMaps(overlay);
        assertEquals(1, configMaps.size(), "ConfigMaps labelled for the Grafana sidecar");
        Map<String, String> data = configMaps.getFirst().getData();
        assertEquals(1, data.size(), () -> "one dashboard per ConfigMap, found keys " + data.keySet());
        return parse(data.values().iterator().next());
    }

    /**
     * Parses dashboard JSON.
     *
     * @param json the document
     * @return the tree
     * @throws AssertionError when it is not JSON
     */
    static JsonNode parse(String json) {
        try {
            return JSON.readTree(json);
        } catch (JsonProcessingException e) {
            throw new AssertionError("the dashboard is not valid JSON: " + e.getOriginalMessage(), e);
        }
    }

    /**
     * Every panel, the panels of collapsed rows included, rows themselves too.
     *
     * @param dashboard dashboard JSON
     * @return panels in document order
     */
    static List<JsonNode> panels(JsonNode dashboard) {
        List<JsonNode> panels = new ArrayList<>();
        for (JsonNode panel : dashboard.path("panels")) {
            panels.add(panel);
            panel.path("panels").forEach(panels::add);
        }
        return panels;
    }

    /**
     * Whether the panel is a row (a heading that queries nothing).
     *
     * @param panel panel JSON
     * @return {@code true} for {@code "type": "row"}
     */
    static boolean isRow(JsonNode panel) {
        return "row".equals(panel.path("type").asText());
    }

    /**
     * Every PromQL expression: each panel target's {@code expr}, and each query variable's query, where Grafana's
     * {@code label_values(selector, label)} becomes the equivalent {@code count by (label) (selector)}.
     *
     * @param dashboard dashboard JSON
     * @return the expressions with where they are
     */
    static List<Query> queries(JsonNode dashboard) {
        List<Query> queries = new ArrayList<>();
        for (JsonNode panel : panels(dashboard)) {
            for (JsonNode target : panel.path("targets")) {
                queries.add(new Query("panel '" + panel.path("title").asText() + "' target "
                                      + target.path("refId").asText(), target.path("expr").asText()));
            }
        }
        for (JsonNode variable : dashboard.path("templating").path("list")) {
            if ("query".equals(variable.path("type").asText())) {
                JsonNode query = variable.path("query");
                String text = query.isObject() ? query.path("query").asText() : query.asText();
                Matcher labelValues = LABEL_VALUES.matcher(text);
                if (labelValues.matches()) {
                    text = "count by (" + labelValues.group(2) + ") (" + labelValues.group(1) + ")";
                }
                queries.add(new Query("variable $" + variable.path("name").asText(), text));
            }
        }
        return queries;
    }
}
