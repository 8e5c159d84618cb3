package com.example.payments.deploy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretVolumeSource;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.empty;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Secrets are created outside this repository (docs/security.md "Secrets"): no Secret of staging or prod carries a
 * value here, not even a placeholder that {@code kubectl apply -k} would write over the real one, and the Deployment
 * reads exactly the Secrets the documentation tells operators to create.
 */
class SecretsManifestsTest {

    /** The Secrets an operator creates, by name (docs/security.md). */
    static final Set<String> EXTERNAL_SECRETS = Set.of("payments-authorization-secrets",
                                                       "payments-authorization-api-keys");

    private static final Pattern SECRET_DEFINITION = Pattern.compile("(?m)^\\s*(kind:\\s*Secret\\s*$|secretGenerator:)");

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#productionLike")
    void stagingAndProdRenderNoSecret(String environment) {
        List<String> secrets = RenderedOverlay.of(environment).objects().stream()
                .filter(object -> object instanceof Secret || object.getKind().endsWith("Secret"))
                .map(object -> object.getKind() + "/" + object.getMetadata().getName()).toList();

        assertThat(environment + " renders Secrets, whose values apply would write over the real ones", secrets,
                   empty());
    }

    @Test
    void noManifestOutsideDevDefinesASecret() throws IOException {
        Path root = DeployTools.projectRoot();
        List<String> found = new ArrayList<>();
        try (Stream<Path> files = Stream.concat(Files.walk(root.resolve("k8s")), Files.walk(root.resolve("config")))) {
            for (Path file : files.filter(Files::isRegularFile).toList()) {
                String relative = root.relativize(file).toString();
                boolean dev = relative.startsWith("k8s/overlays/dev/") || relative.startsWith("config/dev/");
                if (!dev && SECRET_DEFINITION.matcher(Files.readString(file)).find()) {
                    found.add(relative);
                }
            }
        }
        assertThat("Secret manifests or generators outside dev", found, empty());
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#all")
    void theDeploymentReadsOnlyTheDocumentedSecretsAndFailsClosedWithoutThem(String environment) {
        RenderedOverlay overlay = RenderedOverlay.of(environment);
        for (EnvVar env : overlay.container().getEnv()) {
            if (env.getValueFrom() != null && env.getValueFrom().getSecretKeyRef() != null) {
                var reference = env.getValueFrom().getSecretKeyRef();
                assertTrue(EXTERNAL_SECRETS.contains(reference.getName()), () -> env.getName() + " reads "
                        + reference.getName() + ", a Secret docs/security.md does not tell operators to create");
                // A missing Secret then reads as an absent value, which the service refuses naming the key (exit 2).
                assertEquals(Boolean.TRUE, reference.getOptional(), () -> env.getName() + " must be optional");
            }
        }
        for (Volume volume : overlay.deployment().getSpec().getTemplate().getSpec().getVolumes()) {
            SecretVolumeSource secret = volume.getSecret();
            if (secret != null) {
                assertTrue(EXTERNAL_SECRETS.contains(secret.getSecretName()), secret::getSecretName);
                assertEquals(Boolean.TRUE, secret.getOptional(), () -> volume.getName() + " must be optional");
            }
        }
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#productionLike")
    void theApiKeyFileIsTheMountedSecret(String environment) {
        RenderedOverlay overlay = RenderedOverlay.of(environment);
        Path file = Path.of(EnvironmentConfig.of(overlay).string("auth.api-keys-file"));
        VolumeMount mount = overlay.container().getVolumeMounts().stream()
                .filter(m -> file.startsWith(m.getMountPath())).findFirst()
                .orElseThrow(() -> new AssertionError("nothing is mounted at " + file.getParent()));
        Volume volume = overlay.deployment().getSpec().getTemplate().getSpec().getVolumes().stream()
                .filter(v -> v.getName().equals(mount.getName())).findFirst().orElseThrow();

        assertEquals(Boolean.TRUE, mount.getReadOnly());
        assertEquals("payments-authorization-api-keys", volume.getSecret().getSecretName(),
                     "auth.api-keys-file must be read from the API key Secret");
        String path = Path.of(mount.getMountPath()).relativize(file).toString();
        assertTrue(volume.getSecret().getItems().stream().anyMatch(item -> item.getPath().equals(path)
                                                                           && item.getKey().equals("api-keys")),
                   () -> "the Secret's key api-keys must be mounted as " + file);
    }
}
