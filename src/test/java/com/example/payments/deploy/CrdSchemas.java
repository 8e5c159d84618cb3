package com.example.payments.deploy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The field names that the CRDs of the custom resources this project renders accept: PodMonitor and PrometheusRule
 * (prometheus-operator, monitoring.coreos.com/v1, operator 0.93) and Cluster (CloudNativePG, postgresql.cnpg.io/v1,
 * copied from the openAPIV3Schema of {@code config/crd/bases/postgresql.cnpg.io_clusters.yaml} of operator 1.28.4).
 * A CRD's structural schema prunes unknown fields without a word, so a misspelled {@code podMetricEndpoints} would
 * leave a PodMonitor that scrapes nothing, and a misspelled {@code synchronus} a Cluster that replicates
 * asynchronously.
 *
 * <p>Paths use {@code []} for array items; a path listed in {@link #FREE_MAPS} holds arbitrary keys (labels, params);
 * a path in {@link #ENUMS} holds one of the values its CRD enumerates. Extend {@link #FIELDS} when you use a field not
 * listed (the operator's API reference, or its CRD, lists them all).
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
            Map.entry("Cluster:", Set.of("apiVersion", "kind", "metadata", "spec")),
            Map.entry("Cluster:spec", Set.of("affinity", "backup", "bootstrap", "certificates", "description",
                    "enablePDB", "enableSuperuserAccess", "env", "envFrom", "ephemeralVolumeSource",
                    "ephemeralVolumesSizeLimit", "externalClusters", "failoverDelay", "imageCatalogRef", "imageName",
                    "imagePullPolicy", "imagePullSecrets", "inheritedMetadata", "instances", "livenessProbeTimeout",
                    "logLevel", "managed", "maxSyncReplicas", "minSyncReplicas", "monitoring",
                    "nodeMaintenanceWindow", "plugins", "podSecurityContext", "postgresGID", "postgresUID",
                    "postgresql", "primaryUpdateMethod", "primaryUpdateStrategy", "priorityClassName", "probes",
                    "projectedVolumeTemplate", "replica", "replicationSlots", "resources", "schedulerName",
                    "seccompProfile", "securityContext", "serviceAccountTemplate", "smartShutdownTimeout",
                    "startDelay", "stopDelay", "storage", "superuserSecret", "switchoverDelay", "tablespaces",
                    "topologySpreadConstraints", "walStorage")),
            Map.entry("Cluster:spec.bootstrap", Set.of("initdb", "pg_basebackup", "recovery")),
            Map.entry("Cluster:spec.bootstrap.initdb", Set.of("builtinLocale", "dataChecksums", "database",
                    "encoding", "icuLocale", "icuRules", "import", "locale", "localeCType", "localeCollate",
                    "localeProvider", "options", "owner", "postInitApplicationSQL", "postInitApplicationSQLRefs",
                    "postInitSQL", "postInitSQLRefs", "postInitTemplateSQL", "postInitTemplateSQLRefs", "secret",
                    "walSegmentSize")),
            Map.entry("Cluster:spec.postgresql", Set.of("enableAlterSystem", "extensions", "ldap", "parameters",
                    "pg_hba", "pg_ident", "promotionTimeout", "shared_preload_libraries",
                    "syncReplicaElectionConstraint", "synchronous")),
            Map.entry("Cluster:spec.postgresql.synchronous", Set.of("dataDurability", "failoverQuorum",
                    "maxStandbyNamesFromCluster", "method", "number", "standbyNamesPost", "standbyNamesPre")),
            Map.entry("Cluster:spec.affinity", Set.of("additionalPodAffinity", "additionalPodAntiAffinity",
                    "enablePodAntiAffinity", "nodeAffinity", "nodeSelector", "podAntiAffinityType", "tolerations",
                    "topologyKey")),
            Map.entry("Cluster:spec.storage", Set.of("pvcTemplate", "resizeInUseVolumes", "size", "storageClass")),
            Map.entry("Cluster:spec.walStorage", Set.of("pvcTemplate", "resizeInUseVolumes", "size", "storageClass")),
            Map.entry("Cluster:spec.resources", Set.of("claims", "limits", "requests")),
            Map.entry("Cluster:spec.inheritedMetadata", Set.of("annotations", "labels")),
            Map.entry("PrometheusRule:", Set.of("apiVersion", "kind", "metadata", "spec")),
            Map.entry("PrometheusRule:spec", Set.of("groups")),
            Map.entry("PrometheusRule:spec.groups[]", Set.of("interval", "labels", "limit", "name",
                    "partial_response_strategy", "query_offset", "rules")),
            Map.entry("PrometheusRule:spec.groups[].rules[]", Set.of("alert", "annotations", "expr", "for",
                    "keep_firing_for", "labels", "record")));

    private static final Set<String> FREE_MAPS = Set.of(
            "PodMonitor:spec.selector.matchLabels", ENDPOINT + ".params", ENDPOINT + ".proxyConnectHeader",
            "PrometheusRule:spec.groups[].labels", "PrometheusRule:spec.groups[].rules[].labels",
            "PrometheusRule:spec.groups[].rules[].annotations", "Cluster:spec.postgresql.parameters",
            "Cluster:spec.resources.requests", "Cluster:spec.resources.limits", "Cluster:spec.inheritedMetadata.labels",
            "Cluster:spec.inheritedMetadata.annotations");

    /** Fields whose CRD lists the values it accepts (the API server rejects any other). */
    private static final Map<String, Set<String>> ENUMS = Map.of(
            "Cluster:spec.primaryUpdateStrategy", Set.of("unsupervised", "supervised"),
            "Cluster:spec.primaryUpdateMethod", Set.of("switchover", "restart"),
            "Cluster:spec.postgresql.synchronous.method", Set.of("any", "first"),
            "Cluster:spec.postgresql.synchronous.dataDurability", Set.of("required", "preferred"),
            "Cluster:spec.affinity.podAntiAffinityType", Set.of("preferred", "required"));

    private CrdSchemas() {
    }

    /**
     * Unknown fields of a CRD object below its metadata (checked as a typed {@code ObjectMeta} by the caller).
     *
     * @param kind   {@code PodMonitor}, {@code PrometheusRule} or {@code Cluster}; any other kind is reported as unknown
     * @param fields the object's top-level fields other than apiVersion, kind and metadata, as maps and lists
     * @return paths of unknown fields, e.g. {@code spec.podMetricEndpoints}, and of values outside an enumeration
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
        if (!(node instanceof Map<?, ?> map)) {
            Set<String> values = ENUMS.get(schemaPath);
            if (values != null && !values.contains(String.valueOf(node))) {
                found.add(path + " = " + node + " (allowed: " + new TreeSet<>(values) + ")");
            }
            return;
        }
        if (FREE_MAPS.contains(schemaPath)) {
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
