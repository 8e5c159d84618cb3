package com.example.payments.deploy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The field names that the prometheus-operator CRDs (monitoring.coreos.com/v1, operator 0.93) accept for the two
 * kinds this project renders, PodMonitor and PrometheusRule. A CRD's structural schema prunes unknown fields without
 * a word, so a misspelled {@code podMetricEndpoints} would leave a PodMonitor that scrapes nothing.
 *
 * <p>Paths use {@code []} for array items; a path listed in {@link #FREE_MAPS} holds arbitrary keys (labels, params).
 * Extend {@link #FIELDS} when you use a field not listed (the operator's API reference lists them all).
 */
final class CrdSchemas {

    private static final Set<String> SECRET_KEY = Set.of("key", "name", "optional");
    private static final Set<String> SECRET_OR_CONFIGMAP = Set.of("configMap", "secret");
    private static final Set<String> RELABEL = Set.of("action", "modulus", "regex", "replacement", "separator",
                                                       "sourceLabels", "targetLabel");
    private static final Set<String> TLS = Set.of("ca", "cert", "insecureSkipVerify", "keySecret", "maxVersion",
                                                  "minVersion", "serverName");
    private static final String ENDPOINT = "PodMonitor:spec.podMetricsEndpoints[]";

    private static final Map<String, Set<String>> FIELDS = Map.ofEntries(
            Map.entry("PodMonitor:", Set.of("apiVersion", "kind", "metadata", "spec")),
            Map.entry("PodMonitor:spec", Set.of("attachMetadata", "bodySizeLimit", "convertClassicHistogramsToNHCB",
                    "fallbackScrapeProtocol", "jobLabel", "keepDroppedTargets", "labelLimit", "labelNameLengthLimit",
                    "labelValueLengthLimit", "namespaceSelector", "nativeHistogramBucketLimit",
                    "nativeHistogramMinBucketFactor", "podMetricsEndpoints", "podTargetLabels", "sampleLimit",
                    "scrapeClass", "scrapeClassicHistograms", "scrapeNativeHistograms", "scrapeProtocols", "selector",
                    "selectorMechanism", "targetLimit")),
            Map.entry("PodMonitor:spec.attachMetadata", Set.of("node")),
            Map.entry("PodMonitor:spec.namespaceSelector", Set.of("any", "matchNames")),
            Map.entry("PodMonitor:spec.selector", Set.of("matchExpressions", "matchLabels")),
            Map.entry("PodMonitor:spec.selector.matchExpressions[]", Set.of("key", "operator", "values")),
            Map.entry(ENDPOINT, Set.of("authorization", "basicAuth", "bearerTokenSecret", "enableHttp2",
                    "filterRunning", "followRedirects", "honorLabels", "honorTimestamps", "interval",
                    "metricRelabelings", "noProxy", "oauth2", "params", "path", "port", "portNumber",
                    "proxyConnectHeader", "proxyFromEnvironment", "proxyUrl", "relabelings", "scheme",
                    "scrapeTimeout", "targetPort", "tlsConfig", "trackTimestampsStaleness")),
            Map.entry(ENDPOINT + ".authorization", Set.of("credentials", "type")),
            Map.entry(ENDPOINT + ".authorization.credentials", SECRET_KEY),
            Map.entry(ENDPOINT + ".basicAuth", Set.of("password", "username")),
            Map.entry(ENDPOINT + ".basicAuth.password", SECRET_KEY),
            Map.entry(ENDPOINT + ".basicAuth.username", SECRET_KEY),
            Map.entry(ENDPOINT + ".bearerTokenSecret", SECRET_KEY),
            Map.entry(ENDPOINT + ".relabelings[]", RELABEL),
            Map.entry(ENDPOINT + ".metricRelabelings[]", RELABEL),
            Map.entry(ENDPOINT + ".tlsConfig", TLS),
            Map.entry(ENDPOINT + ".tlsConfig.ca", SECRET_OR_CONFIGMAP),
            Map.entry(ENDPOINT + ".tlsConfig.cert", SECRET_OR_CONFIGMAP),
            Map.entry(ENDPOINT + ".tlsConfig.ca.configMap", SECRET_KEY),
            Map.entry(ENDPOINT + ".tlsConfig.ca.secret", SECRET_KEY),
            Map.entry(ENDPOINT + ".tlsConfig.cert.configMap", SECRET_KEY),
            Map.entry(ENDPOINT + ".tlsConfig.cert.secret", SECRET_KEY),
            Map.entry(ENDPOINT + ".tlsConfig.keySecret", SECRET_KEY),
            Map.entry("PrometheusRule:", Set.of("apiVersion", "kind", "metadata", "spec")),
            Map.entry("PrometheusRule:spec", Set.of("groups")),
            Map.entry("PrometheusRule:spec.groups[]", Set.of("interval", "labels", "limit", "name",
                    "partial_response_strategy", "query_offset", "rules")),
            Map.entry("PrometheusRule:spec.groups[].rules[]", Set.of("alert", "annotations", "expr", "for",
                    "keep_firing_for", "labels", "record")));

    private static final Set<String> FREE_MAPS = Set.of(
            "PodMonitor:spec.selector.matchLabels", ENDPOINT + ".params", ENDPOINT + ".proxyConnectHeader",
            "PrometheusRule:spec.groups[].labels", "PrometheusRule:spec.groups[].rules[].labels",
            "PrometheusRule:spec.groups[].rules[].annotations");

    private CrdSchemas() {
    }

    /**
     * Unknown fields of a CRD object below its metadata (checked as a typed {@code ObjectMeta} by the caller).
     *
     * @param kind   {@code PodMonitor} or {@code PrometheusRule}; any other kind is reported as unknown
     * @param fields the object's top-level fields other than apiVersion, kind and metadata, as maps and lists
     * @return paths of unknown fields, e.g. {@code spec.podMetricEndpoints}
     */
    static List<String> unknownFields(String kind, Map<String, Object> fields) {
        List<String> found = new ArrayList<>();
        if (!FIELDS.containsKey(kind + ":")) {
            found.add("(kind " + kind + " has no schema in CrdSchemas)");
            return found;
        }
        // apiVersion, kind and metadata are typed fields of the generic object; everything else arrives here.
        walk(kind + ":", "", fields, found);
        return found;
    }

    private static void walk(String schemaPath, String path, Object node, List<String> found) {
        if (node instanceof List<?> list) {
            for (int i = 0; i < list.size(); i++) {
                walk(schemaPath + "[]", path + "[" + i + "]", list.get(i), found);
            }
            return;
        }
        if (!(node instanceof Map<?, ?> map) || FREE_MAPS.contains(schemaPath)) {
            return;
        }
        Set<String> allowed = FIELDS.get(schemaPath);
        if (allowed == null) {
            found.add(path + " (no schema for " + schemaPath + " in CrdSchemas)");
            return;
        }
        for (Map.Entry<?, ?> entry : map.entrySet()) {
            String key = String.valueOf(entry.getKey());
            String childPath = path.isEmpty() ? key : path + "." + key;
            if (!allowed.contains(key)) {
                found.add(childPath);
            } else if (!"metadata".equals(key)) {
                String childSchema = schemaPath.endsWith(":") ? schemaPath + key : schemaPath + "." + key;
                walk(childSchema, childPath, entry.getValue(), found);
            }
        }
    }
}
