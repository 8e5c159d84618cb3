package com.example.payments.deploy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import com.example.payments.testing.EnvironmentFiles;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

/**
 * The Kubernetes side of an environment read as plain YAML, without kubectl: the grace period and preStop sleep its
 * kustomize component ({@code config/<env>/kustomization.yaml}, or {@code config/base/kustomization.yaml}, which
 * staging's and prod's include: {@link EnvironmentFiles#patches}) patches in, and the probes of the base Deployment
 * ({@code k8s/base/deployment.yaml}; no overlay patches them). {@link GraceFiguresTest} checks, when kubectl is
 * there, that this reading is what the overlay renders.
 */
final class PlainManifests {

    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

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
        PodSpec pod = podPatch(environment);
        Long grace = pod.getTerminationGracePeriodSeconds();
        if (grace == null) {
            throw new AssertionError(environment + ": the kustomization.yaml of "
                                     + EnvironmentFiles.directories(environment) + " pins no "
                                     + "terminationGracePeriodSeconds");
        }
        long preStop = pod.getContainers().getFirst().getLifecycle().getPreStop().getSleep().getSeconds();
        EnvironmentConfig config = EnvironmentConfig.ofRepository(environment);
        return new GraceArithmetic(environment, grace, preStop,
                                   config.duration("shutdown.pre-drain-delay"), config.duration("shutdown.drain-timeout"),
                                   config.duration("shutdown.cleanup-timeout"), config.duration("shutdown.metrics-linger"),
                                   config.duration("shutdown.hard-deadline"));
    }

    /**
     * A probe of the base Deployment's application container.
     *
     * @param name {@code startupProbe}, {@code readinessProbe} or {@code livenessProbe}
     * @return its timing, Kubernetes' defaults where it sets none
     */
    static Probe probe(String name) {
        Deployment deployment;
        try {
            deployment = SERIALIZATION.unmarshal(Files.readString(
                    DeployTools.projectRoot().resolve(Path.of("k8s", "base", "deployment.yaml")),
                    StandardCharsets.UTF_8), Deployment.class);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Container container = deployment.getSpec().getTemplate().getSpec().getContainers().getFirst();
        io.fabric8.kubernetes.api.model.Probe probe = switch (name) {
        case "startupProbe" -> container.getStartupProbe();
        case "readinessProbe" -> container.getReadinessProbe();
        case "livenessProbe" -> container.getLivenessProbe();
        default -> throw new IllegalArgumentException("no probe " + name);
        };
        if (probe == null) {
            throw new AssertionError("k8s/base/deployment.yaml sets no " + name);
        }
        return new Probe(orDefault(probe.getPeriodSeconds(), 10), orDefault(probe.getFailureThreshold(), 3),
                         orDefault(probe.getTimeoutSeconds(), 1));
    }

    private static long orDefault(Integer value, long kubernetesDefault) {
        return value == null ? kubernetesDefault : value;
    }

    // The first Deployment patch of the environment's component or of those it includes.
    private static PodSpec podPatch(String environment) {
        for (String patch : EnvironmentFiles.patches(environment)) {
            if (SERIALIZATION.unmarshal(patch) instanceof Deployment deployment) {
                return deployment.getSpec().getTemplate().getSpec();
            }
        }
        throw new AssertionError("the kustomization.yaml of " + EnvironmentFiles.directories(environment)
                                 + " patches no Deployment");
    }
}
