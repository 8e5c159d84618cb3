package com.example.payments.deploy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import com.example.payments.testing.EnvironmentFiles;

import org.yaml.snakeyaml.Yaml;

/**
 * The Kubernetes side of an environment read as plain YAML, without kubectl: the grace period and preStop sleep its
 * kustomize component ({@code config/<env>/kustomization.yaml}, or {@code config/base/kustomization.yaml}, which
 * staging's and prod's include: {@link EnvironmentFiles#directories}) patches in, and the probes of the base Deployment
 * ({@code k8s/base/deployment.yaml}; no overlay patches them). {@link GraceFiguresTest} checks, when kubectl is
 * there, that this reading is what the overlay renders.
 */
final class PlainManifests {

    /** One probe: period, failures and timeout in seconds. */
    record Probe(long periodSeconds, long failureThreshold, long timeoutSeconds) {
    }

    private PlainManifests() {
    }

    /**
     * The grace arithmetic of one environment from its files alone.
     *
     * @param environment e.g. {@code prod}
     * @return both sides, as the pods would get them
     */
    static GraceArithmetic grace(String environment) {
        Map<String, Object> pod = podPatch(environment);
        Number grace = (Number) pod.get("terminationGracePeriodSeconds");
        if (grace == null) {
            throw new AssertionError(environment + ": the kustomization.yaml of "
                                     + EnvironmentFiles.directories(environment) + " pins no "
                                     + "terminationGracePeriodSeconds");
        }
        Map<String, Object> container = map(list(pod.get("containers")).getFirst());
        Number preStop = (Number) map(map(map(container.get("lifecycle")).get("preStop")).get("sleep")).get("seconds");
        EnvironmentConfig config = EnvironmentConfig.ofRepository(environment);
        return new GraceArithmetic(environment, grace.longValue(), preStop.longValue(),
                                   config.duration("shutdown.pre-drain-delay"), config.duration("shutdown.drain-timeout"),
                                   config.duration("shutdown.cleanup-timeout"), config.duration("shutdown.metrics-linger"),
                                   config.duration("shutdown.hard-deadline"));
    }

    /**
     * A probe of the base Deployment's application container.
     *
     * @param name {@code startupProbe}, {@code readinessProbe} or {@code livenessProbe}
     * @return its timing
     */
    static Probe probe(String name) {
        Map<String, Object> deployment = load(Path.of("k8s", "base", "deployment.yaml"));
        Map<String, Object> pod = map(map(map(deployment.get("spec")).get("template")).get("spec"));
        Map<String, Object> probe = map(map(list(pod.get("containers")).getFirst()).get(name));
        return new Probe(number(probe, "periodSeconds", 10), number(probe, "failureThreshold", 3),
                         number(probe, "timeoutSeconds", 1));
    }

    private static long number(Map<String, Object> probe, String key, long kubernetesDefault) {
        Object value = probe.get(key);
        return value == null ? kubernetesDefault : ((Number) value).longValue();
    }

    // The environment's own component first, then those it includes: the first Deployment patch found.
    private static Map<String, Object> podPatch(String environment) {
        for (Path directory : EnvironmentFiles.directories(environment).reversed()) {
            Object patches = load(directory.resolve("kustomization.yaml")).get("patches");
            for (Object entry : patches == null ? List.of() : list(patches)) {
                Object text = map(entry).get("patch");
                if (text == null) {
                    continue;
                }
                Map<String, Object> patch = map(new Yaml().load((String) text));
                if ("Deployment".equals(patch.get("kind"))) {
                    return map(map(map(patch.get("spec")).get("template")).get("spec"));
                }
            }
        }
        throw new AssertionError("the kustomization.yaml of " + EnvironmentFiles.directories(environment)
                                 + " patches no Deployment");
    }

    private static Map<String, Object> load(Path file) {
        try {
            return map(new Yaml().load(Files.readString(DeployTools.projectRoot().resolve(file),
                                                        StandardCharsets.UTF_8)));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object node) {
        if (!(node instanceof Map)) {
            throw new AssertionError("expected a YAML mapping, found " + node);
        }
        return (Map<String, Object>) node;
    }

    private static List<?> list(Object node) {
        if (!(node instanceof List<?> list)) {
            throw new AssertionError("expected a YAML sequence, found " + node);
        }
        return list;
    }
}
