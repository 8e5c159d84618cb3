package com.example.payments.deploy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.SecretKeySelector;
import io.fabric8.kubernetes.api.model.SecretVolumeSource;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyEgressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.is;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The optional component {@code k8s/components/cloudnative-pg} added to staging and prod, rendered with real kustomize
 * as an operator would list it (after {@code config/<env>} and monitoring): a CloudNativePG {@code Cluster} whose
 * fields its CRD knows ({@link CrdSchemas}), the service reading {@code DATABASE_*} from the Secret the operator
 * generates for that very Cluster, egress to its instances, and a database sized for every replica's pool.
 */
class CloudNativePgComponentTest {

    /** Connections beyond the service's pools: the operator, streaming replication, superuser_reserved_connections. */
    private static final int RESERVED_CONNECTIONS = 20;

    private static RenderedOverlay withComponent(String environment, Path dir) {
        try {
            Path root = DeployTools.projectRoot().toRealPath();
            Path real = dir.toRealPath();
            // kustomize refuses absolute paths to other kustomizations: relative ones from the temporary directory.
            Files.writeString(real.resolve("kustomization.yaml"), """
                    apiVersion: kustomize.config.k8s.io/v1beta1
                    kind: Kustomization
                    resources:
                    - %s
                    components:
                    - %s
                    """.formatted(real.relativize(root.resolve("k8s/overlays").resolve(environment)),
                                  real.relativize(root.resolve("k8s/components/cloudnative-pg"))));
            return RenderedOverlay.render(real);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static GenericKubernetesResource cluster(RenderedOverlay overlay) {
        return overlay.custom("Cluster").orElseThrow(() -> new AssertionError("no CloudNativePG Cluster rendered"));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object value, String what) {
        assertTrue(value instanceof Map, () -> what + " is missing");
        return (Map<String, Object>) value;
    }

    private static Map<String, Object> spec(RenderedOverlay overlay) {
        return map(cluster(overlay).getAdditionalProperties().get("spec"), "Cluster spec");
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#productionLike")
    void everyRenderedObjectWithTheClusterHasOnlyKnownFields(String environment, @TempDir Path dir) {
        RenderedOverlay overlay = withComponent(environment, dir);

        assertEquals("postgresql.cnpg.io/v1", cluster(overlay).getApiVersion());
        assertThat("unknown fields with k8s/components/cloudnative-pg in " + environment,
                   UnknownFields.in(overlay.objects()), is(empty()));
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#productionLike")
    void theServiceReadsTheCredentialsTheOperatorGeneratesForItsCluster(String environment, @TempDir Path dir) {
        RenderedOverlay overlay = withComponent(environment, dir);
        String secret = cluster(overlay).getMetadata().getName() + "-app";

        assertEquals("postgres", EnvironmentConfig.of(overlay).string("idempotency.store"),
                     () -> environment + " must run the postgres store for the Cluster to be used");
        for (Map.Entry<String, String> expected : Map.of("DATABASE_USERNAME", "username",
                                                         "DATABASE_PASSWORD", "password").entrySet()) {
            SecretKeySelector reference = env(overlay, expected.getKey()).getValueFrom().getSecretKeyRef();
            assertEquals(secret, reference.getName(), () -> expected.getKey() + " reads another Secret than the "
                                                            + "one CloudNativePG generates for the Cluster");
            assertEquals(expected.getValue(), reference.getKey(), expected::getKey);
            // The operator creates the Secret by itself: the pod waits for it (CreateContainerConfigError, retried by
            // the kubelet) rather than start without credentials and stay unready until the breaker restarts it.
            assertEquals(Boolean.FALSE, reference.getOptional(), () -> expected.getKey() + " must not be optional");
        }
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#productionLike")
    void theUrlNamesTheClustersPrimaryAndDatabaseAndVerifiesItsCertificate(String environment, @TempDir Path dir) {
        RenderedOverlay overlay = withComponent(environment, dir);
        GenericKubernetesResource cluster = cluster(overlay);
        EnvVar url = env(overlay, "DATABASE_URL");
        String database = String.valueOf(map(map(spec(overlay).get("bootstrap"), "bootstrap").get("initdb"),
                                             "bootstrap.initdb").get("database"));

        assertNull(url.getValueFrom(), "DATABASE_URL has a value and no valueFrom (Kubernetes refuses both)");
        URI uri = URI.create(url.getValue().substring("jdbc:".length()));
        assertEquals(cluster.getMetadata().getName() + "-rw", uri.getHost(), "the Service that follows the primary");
        assertEquals(5432, uri.getPort());
        assertEquals("/" + database, uri.getPath());
        Map<String, String> parameters = new HashMap<>();
        for (String parameter : uri.getQuery().split("&")) {
            int equals = parameter.indexOf('=');
            parameters.put(parameter.substring(0, equals), parameter.substring(equals + 1));
        }
        assertEquals("verify-full", parameters.get("sslmode"));
        Path caFile = Path.of(parameters.get("sslrootcert"));
        VolumeMount mount = overlay.container().getVolumeMounts().stream()
                .filter(m -> caFile.getParent().equals(Path.of(m.getMountPath()))).findFirst()
                .orElseThrow(() -> new AssertionError("nothing is mounted at " + caFile.getParent()));
        SecretVolumeSource source = overlay.deployment().getSpec().getTemplate().getSpec().getVolumes().stream()
                .filter(v -> v.getName().equals(mount.getName())).findFirst().orElseThrow().getSecret();
        assertEquals(cluster.getMetadata().getName() + "-ca", source.getSecretName());
        assertEquals(Boolean.FALSE, source.getOptional(), "the pod waits for the operator's CA like its credentials");
        assertEquals(List.of("ca.crt->" + caFile.getFileName()),
                     source.getItems().stream().map(i -> i.getKey() + "->" + i.getPath()).toList(),
                     "only the CA certificate: the same Secret holds the CA's private key");
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#productionLike")
    void theServiceAcceptsTheComponentsConnectionSettings(String environment, @TempDir Path dir) {
        RenderedOverlay overlay = withComponent(environment, dir);
        Map<String, String> secrets = new HashMap<>(EnvironmentConfig.standInSecrets(dir));
        secrets.remove("database.url");   // the component's own, not a stand-in

        assertDoesNotThrow(EnvironmentConfig.of(overlay, secrets)::validateAsTheServiceDoes,
                           () -> environment + " with k8s/components/cloudnative-pg would stop at startup");
    }

    @Test
    void aMisspelledClusterFieldOrAValueOutsideItsEnumerationIsReported() {
        Map<String, Object> misspelled = Map.of("spec", Map.of("postgresql", Map.of("synchronus", Map.of())));
        Map<String, Object> outside = Map.of("spec", Map.of("postgresql", Map.of("synchronous",
                Map.of("method", "all", "number", 1, "dataDurability", "required"))));

        // Pruned without a word by the API server: the Cluster would replicate asynchronously.
        assertEquals(List.of("spec.postgresql.synchronus"), CrdSchemas.unknownFields("Cluster", misspelled));
        assertEquals(List.of("spec.postgresql.synchronous.method = all (allowed: [any, first])"),
                     CrdSchemas.unknownFields("Cluster", outside));
    }

    private static EnvVar env(RenderedOverlay overlay, String name) {
        List<EnvVar> found = overlay.container().getEnv().stream().filter(env -> env.getName().equals(name)).toList();
        assertEquals(1, found.size(), () -> name + " is set " + found.size() + " times");
        return found.getFirst();
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#productionLike")
    void theNetworkPolicyAdmitsTheClustersInstancesOnThePostgresPort(String environment, @TempDir Path dir) {
        RenderedOverlay overlay = withComponent(environment, dir);
        String name = cluster(overlay).getMetadata().getName();

        boolean admitted = false;
        for (NetworkPolicyEgressRule rule : overlay.one(NetworkPolicy.class).getSpec().getEgress()) {
            for (NetworkPolicyPeer peer : rule.getTo()) {
                if (peer.getPodSelector() != null && peer.getPodSelector().getMatchLabels() != null
                    && name.equals(peer.getPodSelector().getMatchLabels().get("cnpg.io/cluster"))) {
                    assertTrue(peer.getNamespaceSelector() != null
                               && !peer.getNamespaceSelector().getMatchLabels().isEmpty(),
                               "namespace AND pod label in one peer");
                    assertEquals(List.of(5432), rule.getPorts().stream().map(p -> p.getPort().getIntVal()).toList());
                    admitted = true;
                }
            }
        }
        assertTrue(admitted, () -> "no egress rule to the pods labelled cnpg.io/cluster=" + name);
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#productionLike")
    void maxConnectionsCoversThePoolOfEveryReplicaDuringARollout(String environment, @TempDir Path dir) {
        RenderedOverlay overlay = withComponent(environment, dir);
        Deployment deployment = overlay.deployment();
        int replicas = overlay.optional(HorizontalPodAutoscaler.class).map(hpa -> hpa.getSpec().getMaxReplicas())
                .orElseGet(() -> deployment.getSpec().getReplicas());
        int surge = deployment.getSpec().getStrategy().getRollingUpdate().getMaxSurge().getIntVal();
        int poolSize = Integer.parseInt(EnvironmentConfig.of(overlay).string("database.pool-size"));
        Map<String, Object> parameters = map(map(spec(overlay).get("postgresql"), "postgresql").get("parameters"),
                                             "postgresql.parameters");
        int maxConnections = Integer.parseInt(String.valueOf(parameters.get("max_connections")));

        int needed = (replicas + surge) * poolSize + RESERVED_CONNECTIONS;
        assertTrue(maxConnections >= needed,
                   () -> environment + ": max_connections " + maxConnections + " < (replicas " + replicas
                         + " + surge " + surge + ") x database.pool-size " + poolSize + " + " + RESERVED_CONNECTIONS
                         + " = " + needed + ": pods of a scaled-out rollout would be refused connections");
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#productionLike")
    void theClusterSurvivesAZoneAndAFailoverLosesNoCommit(String environment, @TempDir Path dir) {
        Map<String, Object> spec = spec(withComponent(environment, dir));
        Map<String, Object> synchronous = map(map(spec.get("postgresql"), "postgresql").get("synchronous"),
                                              "postgresql.synchronous");
        Map<String, Object> affinity = map(spec.get("affinity"), "affinity");

        assertTrue(((Number) spec.get("instances")).intValue() >= 3, "a primary and two standbys");
        assertTrue(((Number) synchronous.get("number")).intValue() >= 1, "COMMIT waits for one standby");
        assertEquals("required", synchronous.get("dataDurability"),
                     "without a standby, writes wait instead of turning asynchronous");
        assertEquals("required", affinity.get("podAntiAffinityType"));
        assertEquals("topology.kubernetes.io/zone", affinity.get("topologyKey"));
    }
}
