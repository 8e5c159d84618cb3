package com.example.payments.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import io.helidon.config.Config;
import io.helidon.config.ConfigSources;

/**
 * The configuration keys this service knows, and the refusal of every other key in its own sections, so that a typo
 * ({@code -Dwarm-up.enabled=false} for {@code warm-up.requests=0}) stops startup instead of being ignored.
 *
 * <p>The known keys come from one place: every key {@code application.yaml} sets (its defaults) plus
 * {@link #WITHOUT_DEFAULT}, the keys that have none. {@code docs/configuration.md} lists exactly these
 * ({@code ConfigurationTableTest}). A key is known when it is one of them, lies under one (a list or object where a
 * value is expected, which {@link ConfigValues} then reports with its allowed range) or is a section holding them.
 *
 * <p>Under {@code server} and {@code health-server}, the listener nodes Helidon reads itself, the first level must be
 * one of Helidon's listener options ({@link HelidonListenerOptions}: {@code port}, {@code max-payload-size},
 * {@code connection-config}, ...); what lies below an option is Helidon's to read.
 *
 * <p>What is checked, by source:
 * <ul>
 *     <li>The {@code APP_CONFIG_FILE} file: every key. An unknown key is refused ({@link ConfigurationException},
 *     exit 2).</li>
 *     <li>System properties: the keys under this service's sections (the roots of the known keys); the JVM's own
 *     properties live under other roots. The JDK's networking properties under {@code http}
 *     ({@code http.proxyHost}, {@code http.agent}, {@code http.auth.*}, ...) are left alone. An unknown key is
 *     refused.</li>
 *     <li>Environment variables: only warned about ({@link #environmentWarnings}), never refused: a pod carries
 *     variables of its own (Kubernetes service links such as {@code DATABASE_SERVICE_HOST}, proxies), and the mapping
 *     of a key to a variable (dots and dashes to underscores, upper case) is not one to one; under the listener
 *     nodes not even that ({@code HEALTH_SERVER_...} could be either section).</li>
 * </ul>
 */
public final class KnownKeys {

    /**
     * The keys without a default, which {@code application.yaml} therefore does not set: secrets, URIs of
     * dependencies, the API key sources, Helidon's load shedding. Add a key here when it has no default, to
     * {@code application.yaml} when it has one.
     */
    public static final List<String> WITHOUT_DEFAULT = List.of(
            "server.max-concurrent-requests",
            "auth.api-keys", "auth.api-keys-file",
            "idempotency.fingerprint-secret", "idempotency.fingerprint-secret-previous",
            "idempotency.redis.uri",
            "database.url", "database.username", "database.password",
            "authorizer.http.uri",
            "tracing.otlp.endpoint");

    /** The listener nodes Helidon reads itself: their keys are Helidon's ({@code server.connection-config...}). */
    public static final Set<String> HELIDON_ROOTS = Set.of("server", "health-server");

    /** Environment variables read by this service or the platform that look like keys of its sections. */
    private static final Set<String> OTHER_VARIABLES = Set.of("APP_CONFIG_FILE", "HTTP_PROXY");

    private final Set<String> keys;
    private final Set<String> roots;
    private final Set<String> listenerOptions;
    private final Set<String> suggestions;

    private KnownKeys(Set<String> keys, Set<String> listenerOptions) {
        this.keys = keys;
        this.roots = keys.stream().map(KnownKeys::root).filter(root -> !HELIDON_ROOTS.contains(root))
                .collect(Collectors.toCollection(TreeSet::new));
        this.listenerOptions = listenerOptions;
        this.suggestions = new TreeSet<>(keys);
        HELIDON_ROOTS.forEach(root -> listenerOptions.forEach(option -> suggestions.add(root + "." + option)));
    }

    /**
     * The keys of {@code application.yaml} on the classpath plus {@link #WITHOUT_DEFAULT}.
     *
     * @return the known keys
     */
    public static KnownKeys load() {
        Config defaults = Config.builder().disableEnvironmentVariablesSource().disableSystemPropertiesSource()
                .addSource(ConfigSources.classpath("application.yaml")).build();
        Set<String> keys = new TreeSet<>(WITHOUT_DEFAULT);
        defaults.traverse().filter(node -> node.type() == Config.Type.VALUE
                                           && !node.asString().orElse("").isEmpty())
                .forEach(node -> keys.add(node.key().toString()));
        return new KnownKeys(keys, HelidonListenerOptions.load());
    }

    /**
     * Every known key, sorted.
     *
     * @return the keys, e.g. {@code warm-up.requests}
     */
    public Set<String> keys() {
        return keys;
    }

    /**
     * Refuses a key of one of the environment's config files that this service does not know.
     *
     * @param appConfigFile one path of {@code APP_CONFIG_FILE} ({@link AppConfigFiles#paths})
     * @throws ConfigurationException naming the first unknown key and the closest known one
     */
    public void checkFile(String appConfigFile) {
        Config file = Config.builder().disableEnvironmentVariablesSource().disableSystemPropertiesSource()
                .addSource(ConfigSources.file(appConfigFile)).build();
        file.traverse().filter(node -> node.isLeaf())
                .map(node -> node.key().toString())
                .filter(key -> !known(key))
                .sorted().findFirst()
                .ifPresent(key -> {
                    throw unknown(key, "APP_CONFIG_FILE (" + appConfigFile + ")");
                });
    }

    /**
     * Refuses a system property under one of this service's sections (the listener nodes included) that is not a
     * known key.
     *
     * @param properties the system properties
     * @throws ConfigurationException naming the first unknown key and the closest known one
     */
    public void checkSystemProperties(Properties properties) {
        properties.stringPropertyNames().stream()
                .filter(key -> (roots.contains(root(key)) || HELIDON_ROOTS.contains(root(key))) && !jdkNetworking(key)
                               && !known(key))
                .sorted().findFirst()
                .ifPresent(key -> {
                    throw unknown(key, "a system property");
                });
    }

    /**
     * The environment variables that would set a key under one of this service's sections that it does not know:
     * ignored, but worth a warning.
     *
     * @param environment the environment variables
     * @return one line per such variable, naming it and the closest known key; empty when there is none
     */
    public List<String> environmentWarnings(Map<String, String> environment) {
        List<String> warnings = new ArrayList<>();
        Map<String, String> byVariable = keys.stream().collect(Collectors.toMap(KnownKeys::variable, key -> key,
                                                                                (a, b) -> a));
        environment.keySet().stream().sorted().forEach(name -> {
            String variable = variable(name);
            if (ours(variable) && !knownVariable(variable)) {
                String closest = ClosestKey.closest(variable, byVariable.keySet(), '_');
                warnings.add("Environment variable " + name + " sets no key of this service and is ignored; the "
                             + "closest known key is " + byVariable.get(closest) + " (" + closest + ")");
            }
        });
        return warnings;
    }

    private boolean ours(String variable) {
        if (OTHER_VARIABLES.contains(variable)) {
            return false;
        }
        for (String helidon : HELIDON_ROOTS) {
            if (variable.startsWith(variable(helidon) + "_")) {
                return false;
            }
        }
        return roots.stream().anyMatch(root -> variable.startsWith(variable(root) + "_"));
    }

    private boolean knownVariable(String variable) {
        for (String key : keys) {
            String known = variable(key);
            if (variable.equals(known) || variable.startsWith(known + "_") || known.startsWith(variable + "_")) {
                return true;
            }
        }
        return false;
    }

    private boolean known(String key) {
        if (HELIDON_ROOTS.contains(root(key))) {
            String below = key.equals(root(key)) ? "" : key.substring(root(key).length() + 1);
            return below.isEmpty() || listenerOptions.isEmpty() || listenerOptions.contains(root(below));
        }
        for (String known : keys) {
            if (key.equals(known) || key.startsWith(known + ".") || known.startsWith(key + ".")) {
                return true;
            }
        }
        return false;
    }

    private ConfigurationException unknown(String key, String source) {
        return new ConfigurationException(key, "not a key of this service (set by " + source + "); the closest known "
                + "key is " + ClosestKey.closest(key, suggestions, '.') + "; allowed: the keys of "
                + "docs/configuration.md (under server and health-server, Helidon's listener options)");
    }

    // The JDK's networking properties share the root "http" with this service's http.* keys, which are all
    // lower-case: http.proxyHost, http.nonProxyHosts, http.keepAlive, http.agent, http.auth.digest.validateServer.
    private static boolean jdkNetworking(String key) {
        return root(key).equals("http") && (!key.equals(key.toLowerCase(Locale.ROOT)) || key.equals("http.agent")
                                            || key.startsWith("http.auth."));
    }

    private static String root(String key) {
        int dot = key.indexOf('.');
        return dot < 0 ? key : key.substring(0, dot);
    }

    // How an environment variable names a key: dots and dashes as underscores, upper case (HEALTH_PROBER_INTERVAL).
    private static String variable(String key) {
        return key.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
    }
}
