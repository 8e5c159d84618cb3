package com.example.payments.deploy;

import java.util.List;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.apps.RollingUpdateDeployment;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.hasItem;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Security context, ports, Service, disruption budget and rollout strategy of every rendered overlay (the NetworkPolicy:
 * {@link NetworkPolicyTest}).
 */
class PodHardeningTest {

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#all")
    void podRunsAsNonRootOnAReadOnlyRootWithNoPrivileges(String environment) {
        RenderedOverlay overlay = RenderedOverlay.of(environment);
        PodSpec pod = overlay.deployment().getSpec().getTemplate().getSpec();
        PodSecurityContext podContext = pod.getSecurityContext();
        SecurityContext context = overlay.container().getSecurityContext();

        assertTrue(Boolean.TRUE.equals(context.getRunAsNonRoot()) || Boolean.TRUE.equals(podContext.getRunAsNonRoot()));
        assertTrue(podContext.getRunAsUser() != null && podContext.getRunAsUser() > 0, "runAsUser: a numeric non-root UID");
        assertEquals(DockerfileTest.imageUser(), podContext.getRunAsUser(), "runAsUser must be the image's USER");
        assertEquals(Boolean.TRUE, context.getReadOnlyRootFilesystem());
        assertEquals(Boolean.FALSE, context.getAllowPrivilegeEscalation());
        assertThat(context.getCapabilities().getDrop(), hasItem("ALL"));
        String seccomp = context.getSeccompProfile() != null ? context.getSeccompProfile().getType()
                : podContext.getSeccompProfile().getType();
        assertEquals("RuntimeDefault", seccomp);
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#all")
    void onlyTmpIsWritableAndItIsAnEmptyDir(String environment) {
        RenderedOverlay overlay = RenderedOverlay.of(environment);
        List<Volume> volumes = overlay.deployment().getSpec().getTemplate().getSpec().getVolumes();

        overlay.container().getVolumeMounts().forEach(mount -> {
            boolean writable = !Boolean.TRUE.equals(mount.getReadOnly());
            if (writable) {
                assertEquals("/tmp", mount.getMountPath(), () -> environment + ": writable mount " + mount.getName());
                assertTrue(volumes.stream().anyMatch(v -> v.getName().equals(mount.getName()) && v.getEmptyDir() != null));
            }
        });
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#all")
    void noServiceAccountTokenIsMounted(String environment) {
        RenderedOverlay overlay = RenderedOverlay.of(environment);

        assertEquals(Boolean.FALSE, overlay.deployment().getSpec().getTemplate().getSpec().getAutomountServiceAccountToken());
        assertEquals(Boolean.FALSE, overlay.one(ServiceAccount.class).getAutomountServiceAccountToken());
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#all")
    void containerPortsAreTheConfiguredListeners(String environment) {
        RenderedOverlay overlay = RenderedOverlay.of(environment);
        EnvironmentConfig config = EnvironmentConfig.of(overlay);

        assertEquals(Integer.parseInt(config.string("server.port")), port(overlay.container(), "http"));
        assertEquals(Integer.parseInt(config.string("health-server.port")), port(overlay.container(), "health"));
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#all")
    void serviceExposesTheBusinessPortOnly(String environment) {
        RenderedOverlay overlay = RenderedOverlay.of(environment);
        int healthPort = port(overlay.container(), "health");

        for (ServicePort port : overlay.service().getSpec().getPorts()) {
            String target = port.getTargetPort().getStrVal() != null ? port.getTargetPort().getStrVal()
                    : String.valueOf(port.getTargetPort().getIntVal());
            assertEquals("http", target, () -> environment + ": Service port " + port.getName() + " must target http");
            assertFalse(port.getPort() == healthPort || "health".equals(port.getName()));
        }
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#all")
    void rolloutsAndDisruptionsTakeOnePodAtATime(String environment) {
        RenderedOverlay overlay = RenderedOverlay.of(environment);
        RollingUpdateDeployment rolling = overlay.deployment().getSpec().getStrategy().getRollingUpdate();

        assertEquals(1, rolling.getMaxSurge().getIntVal());
        assertEquals(0, rolling.getMaxUnavailable().getIntVal());
        assertEquals(1, overlay.one(PodDisruptionBudget.class).getSpec().getMaxUnavailable().getIntVal());
        assertFalse(overlay.deployment().getSpec().getTemplate().getSpec().getTopologySpreadConstraints().isEmpty());
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#all")
    void containerRequestsCpuAndMemoryAndIsGuaranteedItsMemory(String environment) {
        var resources = RenderedOverlay.of(environment).container().getResources();

        assertTrue(resources.getRequests().containsKey("cpu") && resources.getRequests().containsKey("memory"));
        // The heap is a share of the memory limit; a request below it would let the node overcommit what the JVM uses.
        assertEquals(resources.getLimits().get("memory"), resources.getRequests().get("memory"));
    }

    @Test
    void prodScalesWithAHorizontalPodAutoscalerOnTheDeployment() {
        HorizontalPodAutoscaler hpa = RenderedOverlay.of("prod").one(HorizontalPodAutoscaler.class);

        assertEquals("Deployment", hpa.getSpec().getScaleTargetRef().getKind());
        assertEquals(RenderedOverlay.APP, hpa.getSpec().getScaleTargetRef().getName());
        assertTrue(hpa.getSpec().getMinReplicas() >= 2, "prod keeps at least two replicas through a node drain");
    }

    private static int port(Container container, String name) {
        return container.getPorts().stream().filter(p -> name.equals(p.getName())).findFirst()
                .map(ContainerPort::getContainerPort)
                .orElseThrow(() -> new AssertionError("no container port named " + name));
    }
}
