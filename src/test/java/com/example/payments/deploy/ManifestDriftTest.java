package com.example.payments.deploy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.hasItem;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The drift the tests exist to catch, provoked on a copy of {@code k8s/} and {@code config/}: each edit is rendered
 * with real kustomize and must fail the same checks {@link OverlayManifestsTest} runs on the real tree.
 */
class ManifestDriftTest {

    @Test
    void raisingProdDrainTimeoutPastTheGracePeriodFailsShowingTheArithmetic(@TempDir Path copy) {
        copyTree(copy);
        edit(copy.resolve("config/base/base.yaml"), "drain-timeout: PT15S", "drain-timeout: PT40S");
        RenderedOverlay overlay = RenderedOverlay.render(copy.resolve("k8s/overlays/prod"));
        GraceArithmetic grace = GraceArithmetic.of("prod", overlay, EnvironmentConfig.of(overlay));

        AssertionError failure = assertThrows(AssertionError.class, grace::check);

        assertThat(failure.getMessage(), containsString("terminationGracePeriodSeconds 45 must exceed preStop 5 + "
                                                        + "pre-drain 5 + drain 40 + cleanup 3 + linger 6 + margin 5 = 64"));
    }

    @Test
    void misspellingProdsGracePeriodStopsTheRenderNamingTheMissingField(@TempDir Path copy) {
        DeployTools.require(DeployTools.Tool.KUBECTL); // skips (or fails in CI) here, not inside assertThrows
        copyTree(copy);
        edit(copy.resolve("config/base/kustomization.yaml"), "terminationGracePeriodSeconds:",
             "terminationGracePeriodSecond:");

        AssertionError failure = assertThrows(AssertionError.class,
                                              () -> RenderedOverlay.render(copy.resolve("k8s/overlays/prod")));

        // The monitoring component copies the grace period into the alert rules, so kustomize itself refuses.
        assertThat(failure.getMessage(), containsString("spec.template.spec.terminationGracePeriodSeconds` is missing"));
    }

    @ParameterizedTest(name = "{0}: {1} -> {2}")
    @CsvSource(delimiter = '|', value = {
            "config/dev/kustomization.yaml | terminationGracePeriodSeconds: | terminationGracePeriodSecond: | dev "
            + "| Deployment/payments-authorization: spec.template.spec.terminationGracePeriodSecond",
            "k8s/base/deployment.yaml | readOnlyRootFilesystem: | readOnlyRootFileSystem: | prod "
            + "| Deployment/payments-authorization: spec.template.spec.containers[0].securityContext.readOnlyRootFileSystem",
            "k8s/base/deployment.yaml | failureThreshold: 45 | failureTreshold: 45 | prod "
            + "| Deployment/payments-authorization: spec.template.spec.containers[0].startupProbe.failureTreshold",
            "k8s/base/service.yaml | targetPort: | targetport: | prod "
            + "| Service/payments-authorization: spec.ports[0].targetport",
            "k8s/base/poddisruptionbudget.yaml | maxUnavailable: | maxUnavailible: | staging "
            + "| PodDisruptionBudget/payments-authorization: spec.maxUnavailible",
            "k8s/overlays/prod/horizontalpodautoscaler.yaml | minReplicas: | minReplica: | prod "
            + "| HorizontalPodAutoscaler/payments-authorization: spec.minReplica",
            "k8s/components/monitoring/podmonitor.yaml | podMetricsEndpoints: | podMetricEndpoints: | staging "
            + "| PodMonitor/payments-authorization: spec.podMetricEndpoints",
            "k8s/components/monitoring/prometheusrule.yaml | for: 1m | fro: 1m | prod "
            + "| PrometheusRule/payments-authorization: spec.groups[0].rules[3].fro"})
    void aMisspelledFieldInAnyManifestFailsNamingIt(String file, String field, String misspelled, String environment,
                                                   String expected, @TempDir Path copy) {
        copyTree(copy);
        edit(copy.resolve(file), field, misspelled);

        RenderedOverlay overlay = RenderedOverlay.render(copy.resolve("k8s/overlays").resolve(environment));

        assertThat(UnknownFields.in(overlay.objects()), hasItem(expected));
    }

    private static void copyTree(Path target) {
        Path root = DeployTools.projectRoot();
        for (String dir : new String[] {"k8s", "config"}) {
            try (Stream<Path> paths = Files.walk(root.resolve(dir))) {
                paths.forEach(source -> copy(source, target.resolve(root.relativize(source).toString())));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    private static void copy(Path source, Path target) {
        try {
            if (Files.isDirectory(source)) {
                Files.createDirectories(target);
            } else {
                Files.copy(source, target);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void edit(Path file, String from, String to) {
        try {
            String text = Files.readString(file);
            if (!text.contains(from)) {
                throw new AssertionError(file + " no longer contains '" + from + "': update this test");
            }
            Files.writeString(file, text.replaceFirst(java.util.regex.Pattern.quote(from), to));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
