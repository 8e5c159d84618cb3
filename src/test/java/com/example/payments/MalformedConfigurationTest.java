package com.example.payments;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import com.example.payments.config.ConfigurationException;

import io.helidon.common.media.type.MediaTypes;
import io.helidon.config.Config;
import io.helidon.config.ConfigSources;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.is;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Every malformed configuration value fails startup with one line naming its key. The table is
 * made from the shipped {@code application.yaml} (every key it sets, so keys added later are covered without
 * touching this test) and the optional keys it only mentions: each gets an empty value, a list, an object and the
 * malformed values of its type (numbers, ISO-8601 durations, enums, URIs, hosts). {@code ConfigurationErrorsIT} runs
 * a sample of them through the packaged jar for the exit status.
 */
class MalformedConfigurationTest {

    /** Keys application.yaml leaves out (optional, no default) and what they hold. */
    private static final Map<String, String> OPTIONAL_KEYS = Map.of(
            "idempotency.redis.uri", "redis://127.0.0.1:6379",
            "authorizer.http.uri", "http://127.0.0.1:8090",
            "server.max-concurrent-requests", "400",
            "server.max-payload-size", "16384",
            "server.shutdown-grace-period", "PT1S",
            "health-server.backlog", "1024");

    static Stream<Arguments> malformedValues() throws IOException {
        Map<String, String> keys = new LinkedHashMap<>(shippedKeys());
        keys.putAll(OPTIONAL_KEYS);
        List<Arguments> cases = new ArrayList<>();
        keys.forEach((key, shipped) -> {
            cases.add(Arguments.of(key, "''"));
            cases.add(Arguments.of(key, "[" + quoted(shipped) + "]"));
            cases.add(Arguments.of(key, "{value: " + quoted(shipped) + "}"));
            for (String bad : malformedLike(key, shipped)) {
                cases.add(Arguments.of(key, bad));
            }
        });
        return cases.stream();
    }

    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("malformedValues")
    void aMalformedValueFailsWithOneLineNamingItsKey(String key, String yamlValue) {
        ConfigurationException e = assertThrows(ConfigurationException.class,
                                                () -> AppSettings.create(config(yaml(key, yamlValue))),
                                                key + ": " + yamlValue);
        assertThat(e.getMessage(), startsWith(key + ": "));
        assertThat(e.getMessage(), containsString("allowed"));
        assertThat(e.getMessage(), not(containsString("\n")));
    }

    @Test
    void theIssuesRedisUriNamesTheKeyAndNotThePassword() {
        ConfigurationException e = assertThrows(ConfigurationException.class, () -> AppSettings.create(config(
                yaml("idempotency.redis.uri", "'redis://user:s3cr3t-pa55@127.0.0.1:6379/x'"))));
        assertThat(e.getMessage(), startsWith("idempotency.redis.uri: the database after the host is not a number; "));
        assertThat(e.getMessage(), not(containsString("s3cr3t")));
    }

    @Test
    void aValueWhereASectionIsExpectedNamesTheSection() {
        ConfigurationException e = assertThrows(ConfigurationException.class,
                                                () -> AppSettings.create(config("shutdown: PT5S\n")));
        assertThat(e.getMessage(), startsWith("shutdown: a value where an object is expected; allowed: "));
    }

    @Test
    void anEmptySectionIsNoMistake() {
        AppSettings settings = AppSettings.create(config("authorizer:\n  http:\n"));
        assertThat(settings.authorizer().httpUri().isPresent(), is(false));
    }

    // Malformed values of the key's type, judged from its shipped value.
    private static List<String> malformedLike(String key, String shipped) {
        if (key.endsWith(".host")) {
            return List.of("no-such-host.invalid", "999.1.1.1");
        }
        if (key.endsWith(".uri")) {
            String scheme = shipped.substring(0, shipped.indexOf(':'));
            List<String> malformed = new ArrayList<>(List.of(
                    "'" + scheme + "://127.0.0.1:99999'", "'" + scheme + "://127.0.0.1:0'", "'" + scheme + "://:6379'",
                    "'not a uri'", "'ftp://127.0.0.1'", "'" + scheme + "://127.0.0.1:6379?timeout=x'",
                    "'" + scheme + "://my_host:6379'"));
            if (scheme.equals("redis")) {
                malformed.add("'redis://127.0.0.1:6379/x'");
            }
            return malformed;
        }
        if (isDuration(shipped)) {
            return List.of("5s", "PT", "PT0.0005S", "P400D", "PT99999999999999H", "'PT5S PT5S'");
        }
        if (shipped.matches("-?[0-9]+")) {
            return List.of("abc", "1e3", "1.5", "'12 000'", "99999999999999999999", "-99999999999999999999");
        }
        if (key.equals("idempotency.fingerprint-secret")) {
            return List.of("short");
        }
        if (key.equals("idempotency.redis.key-prefix")) {
            return List.of();
        }
        // The rest are enums.
        return List.of("no-such-" + key.substring(key.lastIndexOf('.') + 1), "'" + shipped + " x'");
    }

    private static boolean isDuration(String text) {
        try {
            Duration.parse(text);
            return true;
        } catch (DateTimeParseException e) {
            return false;
        }
    }

    private static String quoted(String value) {
        return "'" + value + "'";
    }

    // key a.b.c and a YAML value as a nested YAML document.
    private static String yaml(String key, String value) {
        String[] parts = key.split("\\.");
        StringBuilder yaml = new StringBuilder();
        for (int i = 0; i < parts.length; i++) {
            yaml.append("  ".repeat(i)).append(parts[i]).append(':');
            yaml.append(i == parts.length - 1 ? " " + value : "").append('\n');
        }
        return yaml.toString();
    }

    private static Config config(String yaml) {
        return Config.builder()
                .disableEnvironmentVariablesSource()
                .disableSystemPropertiesSource()
                .addSource(ConfigSources.create(yaml, MediaTypes.create("application/x-yaml")))
                .addSource(ConfigSources.classpath("application.yaml"))
                .build();
    }

    // Every leaf of the shipped application.yaml with its value.
    private static Map<String, String> shippedKeys() throws IOException {
        Config shipped;
        try (InputStream in = Main.class.getResourceAsStream("/application.yaml")) {
            shipped = Config.builder().disableEnvironmentVariablesSource().disableSystemPropertiesSource()
                    .addSource(ConfigSources.create(new String(in.readAllBytes(), StandardCharsets.UTF_8),
                                                    MediaTypes.create("application/x-yaml")))
                    .build();
        }
        Map<String, String> leaves = new LinkedHashMap<>();
        shipped.traverse()
                .filter(node -> node.type() == Config.Type.VALUE)
                .filter(node -> !node.asString().orElse("").isBlank())
                .forEach(node -> leaves.put(node.key().toString(), node.asString().get()));
        return leaves;
    }
}
