package com.example.payments.deploy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.example.payments.testing.EnvironmentFiles;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.helidon.common.media.type.MediaTypes;
import io.helidon.config.Config;
import io.helidon.config.ConfigSources;

/**
 * The configuration a pod of a rendered overlay runs with, layered as {@code Main.config} layers it: the container's
 * Secret-backed environment variables, above the files named by {@code APP_CONFIG_FILE} (comma-separated, the last
 * one highest; each read from the very ConfigMap the Deployment mounts at its directory), above
 * {@code application.yaml}.
 *
 * <p>Secrets are created outside this repository (docs/security.md), so no overlay renders one for staging or prod:
 * a Secret-backed variable whose Secret is not rendered is absent, as in a cluster where it was not created yet, and a
 * test supplies stand-in values where it needs the service to start ({@link #standInSecrets}).
 */
final class EnvironmentConfig {

    /**
     * Container environment variables that carry secrets, and the config key Helidon maps each one to. Read from a
     * Secret in every overlay; the CloudNativePG component sets {@code DATABASE_URL} as a value (a URL without
     * credentials), which this class reads too.
     */
    static final Map<String, String> SECRET_ENV_KEYS = Map.of(
            "IDEMPOTENCY_FINGERPRINT_SECRET", "idempotency.fingerprint-secret",
            "IDEMPOTENCY_REDIS_URI", "idempotency.redis.uri",
            "DATABASE_URL", "database.url",
            "DATABASE_USERNAME", "database.username",
            "DATABASE_PASSWORD", "database.password");

    private final Config config;

    private EnvironmentConfig(Config config) {
        this.config = config;
    }

    /**
     * The configuration of the overlay's pods, with the Secret values the overlay renders.
     *
     * @param overlay rendered overlay
     * @return its configuration
     */
    static EnvironmentConfig of(RenderedOverlay overlay) {
        return of(overlay, Map.of());
    }

    /**
     * The configuration of the overlay's pods, with some Secret-backed keys replaced (as a real Secret would).
     *
     * @param overlay         rendered overlay
     * @param secretOverrides config key to value, e.g. {@code idempotency.fingerprint-secret}
     * @return its configuration
     */
    static EnvironmentConfig of(RenderedOverlay overlay, Map<String, String> secretOverrides) {
        Map<String, String> secrets = new LinkedHashMap<>(secretValues(overlay));
        secrets.putAll(secretOverrides);
        Config.Builder builder = Config.builder()
                .disableEnvironmentVariablesSource()
                .disableSystemPropertiesSource()
                .addSource(ConfigSources.create(secrets));
        return new EnvironmentConfig(layered(builder, mountedConfigFiles(overlay)));
    }

    /**
     * The configuration an environment's pods would run with, read straight from its files in {@code config/}
     * ({@link EnvironmentFiles}: {@code config/base/base.yaml} then {@code config/<env>/config.yaml} for staging and
     * prod) over {@code application.yaml}, without rendering anything (no kubectl; Secret-backed keys are absent).
     *
     * @param environment e.g. {@code prod}
     * @return its configuration
     */
    static EnvironmentConfig ofRepository(String environment) {
        List<String> contents = new ArrayList<>();
        for (Path file : EnvironmentFiles.files(environment)) {
            try {
                contents.add(Files.readString(DeployTools.projectRoot().resolve(file), StandardCharsets.UTF_8));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        Config.Builder builder = Config.builder().disableEnvironmentVariablesSource().disableSystemPropertiesSource();
        return new EnvironmentConfig(layered(builder, contents));
    }

    // The files above application.yaml, the last one highest (Helidon ranks sources in the order they are added).
    private static Config layered(Config.Builder builder, List<String> contents) {
        for (String content : contents.reversed()) {
            builder.addSource(ConfigSources.create(content, MediaTypes.APPLICATION_YAML));
        }
        return builder.addSource(ConfigSources.classpath("application.yaml")).build();
    }

    /**
     * The merged configuration.
     *
     * @return config root
     */
    Config config() {
        return config;
    }

    /**
     * A duration key, parsed as the service parses it. {@code application.yaml} defines every key this is asked for.
     *
     * @param key full key, e.g. {@code shutdown.drain-timeout}
     * @return the duration
     */
    Duration duration(String key) {
        String raw = string(key);
        try {
            return Duration.parse(raw.trim());
        } catch (RuntimeException e) {
            throw new AssertionError(key + ": '" + raw + "' is not an ISO-8601 duration", e);
        }
    }

    /**
     * A string key.
     *
     * @param key full key
     * @return its value
     * @throws AssertionError when absent from every layer
     */
    String string(String key) {
        return config.get(key).asString().orElseThrow(() -> new AssertionError(key + " is not configured"));
    }

    /**
     * Runs the service's own startup validation ({@code AppSettings.create}, the code {@code Main} runs before it
     * binds a port) on this configuration.
     *
     * @throws RuntimeException the service's {@code ConfigurationException}, naming the key, when it would refuse
     *                          to start
     */
    void validateAsTheServiceDoes() {
        try {
            Method create = Class.forName("com.example.payments.AppSettings").getDeclaredMethod("create", Config.class);
            create.setAccessible(true);
            create.invoke(null, config);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new AssertionError(e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new AssertionError("AppSettings.create(Config) not found: update EnvironmentConfig", e);
        }
    }

    // The texts of the files APP_CONFIG_FILE names (comma-separated, lowest precedence first), each read from the very
    // ConfigMap the Deployment mounts at its directory.
    private static List<String> mountedConfigFiles(RenderedOverlay overlay) {
        Container container = overlay.container();
        String value = container.getEnv().stream().filter(e -> "APP_CONFIG_FILE".equals(e.getName())).findFirst()
                .map(EnvVar::getValue)
                .orElseThrow(() -> new AssertionError("container sets no APP_CONFIG_FILE: the service would run on "
                                                      + "its laptop defaults"));
        List<String> contents = new ArrayList<>();
        for (String file : value.split(",")) {
            Path path = Path.of(file.strip());
            VolumeMount mount = container.getVolumeMounts().stream()
                    .filter(m -> Path.of(m.getMountPath()).equals(path.getParent())).findFirst()
                    .orElseThrow(() -> new AssertionError("APP_CONFIG_FILE=" + value + " but nothing is mounted at "
                                                          + path.getParent()));
            ConfigMap configMap = overlay.configMapOfVolume(mount.getName());
            String content = configMap.getData() == null ? null
                    : configMap.getData().get(path.getFileName().toString());
            if (content == null) {
                throw new AssertionError("ConfigMap " + configMap.getMetadata().getName() + " has no key "
                                         + path.getFileName() + " for APP_CONFIG_FILE=" + value);
            }
            contents.add(content);
        }
        return contents;
    }

    /**
     * Values a real environment's Secrets would supply, for tests that need the service to accept the configuration:
     * a fingerprint secret, the database's URL (staging and prod run {@code idempotency.store: postgres}), and a file
     * of API key hashes holding one freshly generated key (in no file of this repository), at a temporary path
     * standing in for the Secret's mount. Each one is required at startup. The database's username and password are
     * not here: the service accepts a password only from the environment variable {@code DATABASE_PASSWORD} (a
     * Secret), which a test cannot set in its own JVM, and a wrong or missing one shows at the first connection, as
     * readiness 503 naming {@code database}, not at startup.
     *
     * @param dir where the stand-in key file is written
     * @return config key to value: {@code idempotency.fingerprint-secret}, {@code database.url},
     *         {@code auth.api-keys-file}
     */
    static Map<String, String> standInSecrets(Path dir) {
        return standInSecrets(dir, "sha256:" + HexFormat.of().formatHex(randomBytes()) + " m_123");
    }

    /**
     * Like {@link #standInSecrets(Path)}, with the given content of the API key file.
     *
     * @param dir     where the stand-in key file is written
     * @param apiKeys the file's content, in the {@code ApiKeys} text form
     * @return config key to value
     */
    static Map<String, String> standInSecrets(Path dir, String apiKeys) {
        try {
            Path file = Files.createTempFile(dir, "api-keys", "");
            Files.writeString(file, apiKeys + "\n");
            return Map.of("idempotency.fingerprint-secret", "stand-in-for-a-real-secret-of-32-chars",
                          "database.url", "jdbc:postgresql://postgres.example.com:5432/payments?sslmode=verify-full",
                          "auth.api-keys-file", file.toString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static byte[] randomBytes() {
        byte[] bytes = new byte[32];
        new SecureRandom().nextBytes(bytes);
        return bytes;
    }

    private static Map<String, String> secretValues(RenderedOverlay overlay) {
        Map<String, String> values = new LinkedHashMap<>();
        for (EnvVar env : overlay.container().getEnv()) {
            String key = SECRET_ENV_KEYS.get(env.getName());
            if (key != null && env.getValue() != null) {
                values.put(key, env.getValue());
            }
            if (env.getValueFrom() == null || env.getValueFrom().getSecretKeyRef() == null) {
                continue;
            }
            if (key == null) {
                throw new AssertionError("Secret-backed variable " + env.getName() + " maps to no known config key: "
                                         + "add it to EnvironmentConfig.SECRET_ENV_KEYS");
            }
            // Not rendered: created outside the repository, so the pod gets what the cluster holds.
            overlay.optionalSecret(env.getValueFrom().getSecretKeyRef().getName()).ifPresent(secret ->
                    values.put(key, secretValue(secret, env.getValueFrom().getSecretKeyRef().getKey())));
        }
        return values;
    }

    private static String secretValue(Secret secret, String key) {
        if (secret.getStringData() != null && secret.getStringData().containsKey(key)) {
            return secret.getStringData().get(key);
        }
        if (secret.getData() != null && secret.getData().containsKey(key)) {
            return new String(Base64.getDecoder().decode(secret.getData().get(key)), StandardCharsets.UTF_8);
        }
        throw new AssertionError("Secret " + secret.getMetadata().getName() + " has no key " + key);
    }
}
