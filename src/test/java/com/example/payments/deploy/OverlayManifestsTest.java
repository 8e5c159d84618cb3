package com.example.payments.deploy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import com.example.payments.testing.EnvironmentFiles;

import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.anyOf;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Renders every overlay with real kustomize and checks what {@code kubectl apply -k} would run against the
 * configuration its pods would read. Probes: {@link ProbeSettingsTest}; pod hardening and traffic:
 * {@link PodHardeningTest}; monitoring: {@link MonitoringManifestsTest}.
 */
class OverlayManifestsTest {

    private static final Pattern CARD_LIKE = Pattern.compile("\\d{12,}");

    /** Config roots of the service: an environment variable under one of them overrides the mounted file. */
    private static final List<String> CONFIG_ROOT_PREFIXES =
            List.of("SERVER_", "HEALTH_", "SHUTDOWN_", "IDEMPOTENCY_", "AUTHORIZER_", "LOGGING_", "METRICS_",
                    "DATABASE_");

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#all")
    void everyRenderedObjectHasOnlyKnownFields(String environment) {
        RenderedOverlay overlay = RenderedOverlay.of(environment);

        assertThat("unknown fields in k8s/overlays/" + environment, UnknownFields.in(overlay.objects()), is(empty()));
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#all")
    void graceArithmeticHoldsAgainstTheMountedConfig(String environment) {
        RenderedOverlay overlay = RenderedOverlay.of(environment);

        GraceArithmetic grace = GraceArithmetic.of(environment, overlay, EnvironmentConfig.of(overlay));

        grace.check();
        System.out.println("Grace arithmetic of " + environment + ": " + grace.summary());
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#all")
    void theServiceAcceptsTheMountedConfigWithRealSecrets(String environment, @TempDir Path dir) {
        EnvironmentConfig config = EnvironmentConfig.of(RenderedOverlay.of(environment),
                                                        EnvironmentConfig.standInSecrets(dir));

        assertDoesNotThrow(config::validateAsTheServiceDoes,
                           () -> EnvironmentFiles.files(environment) + " would stop the service at startup");
    }

    @Test
    void devStartsWithoutAnySecret() {
        assertDoesNotThrow(EnvironmentConfig.of(RenderedOverlay.of("dev"))::validateAsTheServiceDoes);
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#productionLike")
    void productionLikeEnvironmentsWithoutASecretValueStopNamingIt(String environment, @TempDir Path dir) {
        RenderedOverlay overlay = RenderedOverlay.of(environment);
        Map<String, String> secrets = EnvironmentConfig.standInSecrets(dir);

        for (String missing : secrets.keySet()) {
            Map<String, String> without = new HashMap<>(secrets);
            without.remove(missing);
            RuntimeException refused = assertThrows(RuntimeException.class,
                                                    EnvironmentConfig.of(overlay, without)::validateAsTheServiceDoes);
            // Missing, unreadable, or the development default it falls back to: refused, naming the key (exit 2).
            assertThat(refused.getMessage(), startsWith(missing + ": "));
        }
        assertThrows(RuntimeException.class, EnvironmentConfig.of(overlay)::validateAsTheServiceDoes);
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#all")
    void eachEnvironmentNamesItselfAndProductionLikeOnesCallTheIssuerOverHttp(String environment) {
        EnvironmentConfig config = EnvironmentConfig.of(RenderedOverlay.of(environment));

        assertEquals(environment, config.string("app.environment"));
        if (!environment.equals("dev")) {
            assertEquals("http", config.string("authorizer.type"));
            assertTrue(config.string("authorizer.http.uri").startsWith("https://"),
                       () -> environment + ": the issuer is called over TLS");
        }
    }

    @Test
    void noCardLikeNumberAppearsInConfigOrManifests() throws IOException {
        Path root = DeployTools.projectRoot();
        try (Stream<Path> files = Stream.concat(Files.walk(root.resolve("config")), Files.walk(root.resolve("k8s")))) {
            for (Path file : files.filter(Files::isRegularFile).toList()) {
                assertFalse(CARD_LIKE.matcher(Files.readString(file)).find(),
                            () -> root.relativize(file) + " holds a run of 12 or more digits: card numbers belong in "
                                  + "tests and docs only");
            }
        }
    }


    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#productionLike")
    void productionLikeEnvironmentsLogJson(String environment) {
        assertEquals("json", EnvironmentConfig.of(RenderedOverlay.of(environment)).string("logging.format"));
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#all")
    void severalReplicasShareTheirIdempotencyKeysThroughASharedStore(String environment) {
        RenderedOverlay overlay = RenderedOverlay.of(environment);
        Deployment deployment = overlay.deployment();
        int maxReplicas = overlay.optional(HorizontalPodAutoscaler.class)
                .map(hpa -> hpa.getSpec().getMaxReplicas())
                .orElseGet(() -> deployment.getSpec().getReplicas() == null ? 1 : deployment.getSpec().getReplicas());

        if (maxReplicas > 1) {
            assertThat(environment + " runs up to " + maxReplicas + " replicas: with in-memory idempotency a retry "
                       + "that lands on another pod authorizes twice",
                       EnvironmentConfig.of(overlay).string("idempotency.store"), anyOf(is("postgres"), is("redis")));
        }
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#productionLike")
    void productionLikeEnvironmentsKeepTheirPaymentsInPostgres(String environment) {
        assertEquals("postgres", EnvironmentConfig.of(RenderedOverlay.of(environment)).string("idempotency.store"),
                     () -> environment + ": the system of record is PostgreSQL (docs/backends.md); Redis forgets "
                           + "payments after its retention and loses what a failover did not replicate");
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#all")
    void anAutoscaledDeploymentLeavesItsReplicaCountToTheAutoscaler(String environment) {
        RenderedOverlay overlay = RenderedOverlay.of(environment);

        if (overlay.optional(HorizontalPodAutoscaler.class).isPresent()) {
            assertNull(overlay.deployment().getSpec().getReplicas(),
                       "spec.replicas beside an HPA is reset by every kubectl apply");
        }
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#all")
    void noEnvironmentVariableOverridesTheMountedConfig(String environment) {
        Set<String> allowed = EnvironmentConfig.SECRET_ENV_KEYS.keySet();

        for (EnvVar env : RenderedOverlay.of(environment).container().getEnv()) {
            boolean overrides = CONFIG_ROOT_PREFIXES.stream().anyMatch(env.getName()::startsWith);
            assertTrue(!overrides || allowed.contains(env.getName()),
                       () -> environment + ": " + env.getName() + " overrides a key of "
                             + EnvironmentFiles.files(environment) + " behind the tests' back; set it in those files "
                             + "instead");
        }
    }
}
