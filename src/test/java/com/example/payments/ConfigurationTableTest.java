package com.example.payments;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.helidon.config.Config;
import io.helidon.config.ConfigSources;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.greaterThan;
import static org.hamcrest.Matchers.is;

/**
 * The configuration key table of docs/configuration.md cannot go stale: every key {@code application.yaml} sets is
 * in the table with exactly that default, every key of the table without a default is one {@code application.yaml}
 * leaves unset, and the code's own fallbacks (used when a key is absent) are the defaults of {@code application.yaml},
 * so there is one source of defaults. Change a default and this test names the row to change with it.
 *
 * <p>The table's shape: first column the key in backticks ({@code `a` / `b`} for two keys on one row), second column
 * the default in backticks ({@code `x` / `y`}), or words without backticks ({@code —}, {@code unlimited}) when
 * there is none.
 */
class ConfigurationTableTest {

    private static final Path TABLE = Path.of("docs", "configuration.md");
    private static final Pattern TICKED = Pattern.compile("`([^`]*)`");

    @Test
    void everyDefaultOfApplicationYamlIsInTheTable() throws Exception {
        Map<String, Optional<String>> table = table(Files.readAllLines(TABLE, StandardCharsets.UTF_8));
        assertThat("rows of the key table in " + TABLE, table.size(), greaterThan(40));
        assertThat("keys whose default in " + TABLE + " differs from application.yaml",
                   mismatches(table, applicationYaml()), empty());
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"in-memory", "redis"})
    void theCodesFallbacksAreTheDefaultsOfApplicationYaml(String store) {
        // The fingerprint secret has no default in the code (a missing secret stops startup), and the keys of the
        // redis store and the http authorizer are read only when selected: given to both, above application.yaml.
        Map<String, String> given = Map.of("idempotency.fingerprint-secret", "the-table-test-fingerprint-secret",
                                           "idempotency.store", store,
                                           "idempotency.redis.uri", "redis://127.0.0.1:1",
                                           "authorizer.http.uri", "http://127.0.0.1:1");
        AppSettings fallbacks = AppSettings.create(config(ConfigSources.create(given).build()));
        AppSettings defaults = AppSettings.create(config(ConfigSources.create(given).build(),
                                                         ConfigSources.classpath("application.yaml").build()));
        assertThat("ports", List.of(fallbacks.businessPort(), fallbacks.healthPort()),
                   is(List.of(defaults.businessPort(), defaults.healthPort())));
        assertThat("health.*", fallbacks.health(), is(defaults.health()));
        assertThat("shutdown.*", fallbacks.shutdown(), is(defaults.shutdown()));
        // By what they show: the secrets they hold are compared by identity, and come from the same source anyway.
        assertThat("idempotency.*", fallbacks.idempotency().toString(), is(defaults.idempotency().toString()));
        assertThat("authorizer.*", fallbacks.authorizer(), is(defaults.authorizer()));
        assertThat("http.* and listener limits", fallbacks.http(), is(defaults.http()));
        assertThat("logging.format", fallbacks.logFormat(), is(defaults.logFormat()));
        assertThat("app.environment", fallbacks.environment(), is(defaults.environment()));
    }

    @Test
    void aDefaultChangedWithoutTheTableIsNamed() {
        Map<String, Optional<String>> table = table(List.of(
                "| key | default | allowed | meaning |",
                "|---|---|---|---|",
                "| `shutdown.drain-timeout` | `PT10S` | duration | longest wait |",
                "| `server.idle-connection-timeout` / `server.idle-connection-period` | `PT65S` / `PT5S` | d | idle |",
                "| `idempotency.redis.uri` | — (required with `redis`) | URI | the store |"));
        Map<String, String> yaml = Map.of("shutdown.drain-timeout", "PT12S",
                                          "server.idle-connection-timeout", "PT65S",
                                          "server.idle-connection-period", "PT5S",
                                          "idempotency.redis.uri", "redis://x",
                                          "health.new-key", "1");
        assertThat(mismatches(table, yaml), contains(
                "shutdown.drain-timeout: table says `PT10S`, application.yaml PT12S",
                "idempotency.redis.uri: table says no default, application.yaml redis://x",
                "health.new-key: in application.yaml (1), not in the table"));
    }

    static List<String> mismatches(Map<String, Optional<String>> table, Map<String, String> yaml) {
        List<String> mismatches = new ArrayList<>();
        for (Map.Entry<String, Optional<String>> row : table.entrySet()) {
            String key = row.getKey();
            String actual = yaml.get(key);
            if (row.getValue().isPresent() && !row.getValue().get().equals(actual)) {
                mismatches.add(key + ": table says `" + row.getValue().get() + "`, application.yaml "
                               + (actual == null ? "has no such key" : actual));
            } else if (row.getValue().isEmpty() && actual != null) {
                mismatches.add(key + ": table says no default, application.yaml " + actual);
            }
        }
        yaml.keySet().stream().sorted().filter(key -> !table.containsKey(key))
                .forEach(key -> mismatches.add(key + ": in application.yaml (" + yaml.get(key) + "), not in the table"));
        return mismatches;
    }

    /** Key to default (empty when the table names none), in table order. */
    static Map<String, Optional<String>> table(List<String> lines) {
        Map<String, Optional<String>> table = new LinkedHashMap<>();
        for (String line : lines) {
            if (!line.startsWith("| `")) {
                continue;
            }
            String[] cells = line.split(" \\| ");
            String[] keys = cells[0].substring(2).split(" / ");
            String[] defaults = cells[1].split(" / ");
            for (int i = 0; i < keys.length; i++) {
                String key = keys[i].trim().replace("`", "");
                String cell = i < defaults.length ? defaults[i].trim() : "";
                Matcher ticked = TICKED.matcher(cell);
                table.put(key, cell.startsWith("`") && ticked.find() ? Optional.of(ticked.group(1)) : Optional.empty());
            }
        }
        return table;
    }

    private static Map<String, String> applicationYaml() {
        Map<String, String> leaves = new LinkedHashMap<>();
        config(ConfigSources.classpath("application.yaml").build()).traverse()
                .filter(node -> node.type() == Config.Type.VALUE && !node.asString().get().isEmpty())
                .forEach(node -> leaves.put(node.key().toString(), node.asString().get()));
        return leaves;
    }

    /** The sources given, highest precedence first; no environment variables or system properties. */
    private static Config config(io.helidon.config.spi.ConfigSource... sources) {
        Config.Builder builder = Config.builder().disableEnvironmentVariablesSource().disableSystemPropertiesSource();
        for (io.helidon.config.spi.ConfigSource source : sources) {
            builder.addSource(source);
        }
        return builder.build();
    }
}
