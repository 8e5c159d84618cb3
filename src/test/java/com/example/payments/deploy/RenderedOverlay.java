package com.example.payments.deploy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * An overlay rendered by real kustomize ({@code kubectl kustomize DIR}) and read back as typed objects: what
 * {@code kubectl apply -k DIR} would send to the cluster.
 *
 * <p>Built-in kinds become fabric8 model classes, whose unknown (e.g. misspelled) fields land in
 * {@code getAdditionalProperties()}; CRD kinds (PodMonitor, PrometheusRule) come back as
 * {@link GenericKubernetesResource}. {@link UnknownFields} checks both.
 */
final class RenderedOverlay {

    /** Name of the Deployment, its container, Service, ServiceAccount, PDB, NetworkPolicy, HPA and monitors. */
    static final String APP = "payments-authorization";

    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();
    private static final Map<Path, RenderedOverlay> CACHE = new ConcurrentHashMap<>();

    private final String yaml;
    private final List<HasMetadata> objects;

    private RenderedOverlay(String yaml, List<HasMetadata> objects) {
        this.yaml = yaml;
        this.objects = objects;
    }

    /**
     * Renders {@code k8s/overlays/<environment>} of this project, once per test run.
     *
     * @param environment {@code dev}, {@code staging} or {@code prod}
     * @return the rendered overlay
     */
    static RenderedOverlay of(String environment) {
        Path dir = DeployTools.projectRoot().resolve("k8s/overlays").resolve(environment);
        return CACHE.computeIfAbsent(dir, RenderedOverlay::render);
    }

    /**
     * Renders any kustomization directory (tests render edited copies of the project's tree).
     *
     * @param kustomizationDir directory with a kustomization.yaml
     * @return the rendered overlay
     * @throws AssertionError naming kustomize's complaint when it cannot render
     */
    static RenderedOverlay render(Path kustomizationDir) {
        Path kubectl = DeployTools.require(DeployTools.Tool.KUBECTL);
        DeployTools.Result result = DeployTools.run(kustomizationDir,
                List.of(kubectl.toString(), "kustomize", kustomizationDir.toString()));
        if (result.exitCode() != 0) {
            fail("kubectl kustomize " + kustomizationDir + " failed: " + result.stderr());
        }
        return parse(result.stdout());
    }

    /**
     * Reads a multi-document YAML stream as typed objects.
     *
     * @param yaml rendered manifests, documents separated by {@code ---} lines
     * @return the objects
     */
    static RenderedOverlay parse(String yaml) {
        List<HasMetadata> objects = new ArrayList<>();
        for (String document : yaml.split("(?m)^---\\s*$")) {
            if (!document.isBlank()) {
                objects.add(SERIALIZATION.unmarshal(document, HasMetadata.class));
            }
        }
        return new RenderedOverlay(yaml, List.copyOf(objects));
    }

    /**
     * The rendered YAML as kustomize printed it.
     *
     * @return multi-document YAML
     */
    String yaml() {
        return yaml;
    }

    /**
     * Every rendered object.
     *
     * @return objects in kustomize's order
     */
    List<HasMetadata> objects() {
        return objects;
    }

    /**
     * The only object of a typed kind.
     *
     * @param type model class, e.g. {@code Deployment.class}
     * @param <T>  model type
     * @return the object
     * @throws AssertionError unless exactly one is rendered
     */
    <T extends HasMetadata> T one(Class<T> type) {
        List<T> found = all(type);
        assertEquals(1, found.size(), () -> "rendered " + type.getSimpleName() + " objects: " + names(found));
        return found.getFirst();
    }

    /**
     * The object of a typed kind, if rendered.
     *
     * @param type model class
     * @param <T>  model type
     * @return the object, or empty when none is rendered
     */
    <T extends HasMetadata> Optional<T> optional(Class<T> type) {
        List<T> found = all(type);
        return found.isEmpty() ? Optional.empty() : Optional.of(one(type));
    }

    /**
     * Every object of a typed kind.
     *
     * @param type model class
     * @param <T>  model type
     * @return matching objects
     */
    <T extends HasMetadata> List<T> all(Class<T> type) {
        return objects.stream().filter(type::isInstance).map(type::cast).toList();
    }

    /**
     * A CRD object (e.g. {@code PodMonitor}), if rendered.
     *
     * @param kind the kind
     * @return the generic object, or empty
     */
    Optional<GenericKubernetesResource> custom(String kind) {
        return all(GenericKubernetesResource.class).stream().filter(r -> kind.equals(r.getKind())).findFirst();
    }

    /**
     * The application's Deployment.
     *
     * @return the Deployment
     */
    Deployment deployment() {
        return one(Deployment.class);
    }

    /**
     * The application's container in the Deployment.
     *
     * @return the container named {@value #APP}
     */
    Container container() {
        return deployment().getSpec().getTemplate().getSpec().getContainers().stream()
                .filter(c -> APP.equals(c.getName())).findFirst()
                .orElseThrow(() -> new AssertionError("no container named " + APP));
    }

    /**
     * The ConfigMap that the Deployment mounts, found through the pod's volume (kustomize adds a content hash to the
     * generated name).
     *
     * @param volumeName name of the pod volume
     * @return the ConfigMap
     */
    ConfigMap configMapOfVolume(String volumeName) {
        String name = deployment().getSpec().getTemplate().getSpec().getVolumes().stream()
                .filter(v -> volumeName.equals(v.getName()) && v.getConfigMap() != null).findFirst()
                .orElseThrow(() -> new AssertionError("no configMap volume named " + volumeName))
                .getConfigMap().getName();
        return all(ConfigMap.class).stream().filter(c -> name.equals(c.getMetadata().getName())).findFirst()
                .orElseThrow(() -> new AssertionError("volume " + volumeName + " mounts ConfigMap " + name
                                                      + ", which is not rendered"));
    }

    /**
     * A rendered Secret by name.
     *
     * @param name Secret name
     * @return the Secret
     */
    Secret secret(String name) {
        return optionalSecret(name).orElseThrow(() -> new AssertionError("no Secret named " + name));
    }

    /**
     * A rendered Secret by name, if the overlay renders it (staging and prod never do: their Secrets are created
     * outside the repository).
     *
     * @param name Secret name
     * @return the Secret, or empty
     */
    Optional<Secret> optionalSecret(String name) {
        return all(Secret.class).stream().filter(s -> name.equals(s.getMetadata().getName())).findFirst();
    }

    /**
     * The application's Service.
     *
     * @return the Service
     */
    Service service() {
        return one(Service.class);
    }

    private static String names(List<? extends HasMetadata> objects) {
        return objects.stream().map(o -> o.getMetadata().getName()).toList().toString();
    }
}
