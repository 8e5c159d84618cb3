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

import com.example.payments.testing.EnvironmentFiles;

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
    /** A default the rename must not touch, split by an HTML comment: {@code <code>pay<!-- -->ments</code>}. */
    private static final Pattern CODE = Pattern.compile("<code>(.*?)</code>");
    /** In a default cell: {@code (dev 256, staging and prod 2000)}, {@code (staging, prod: `/etc/...`)}. */
    private static final Pattern ENVIRONMENT_VALUE = Pattern.compile(
            "((?:dev|staging|prod)(?:(?:, | and )(?:dev|staging|prod))*):? ([0-9]+|`[^`]+`)");

    @Test
    void everyDefaultOfApplicationYamlIsInTheTable() throws Exception {
        Map<String, Optional<String>> table = table(Files.readAllLines(TABLE, StandardCharsets.UTF_8));
        assertThat("rows of the key table in " + TABLE, table.size(), greaterThan(40));
        assertThat("keys whose default in " + TABLE + " differs from application.yaml",
                   mismatches(table, applicationYaml()), empty());
    }

    @Test
    void theTableListsExactlyTheKeysTheServiceKnows() throws Exception {
        // The keys startup accepts (KnownKeys: application.yaml plus the keys without a default) are the table's rows,
        // so that neither a documented key is refused nor an accepted one undocumented.
        java.util.Set<String> rows = new java.util.TreeSet<>(table(Files.readAllLines(TABLE, StandardCharsets.UTF_8))
                                                                     .keySet());
        assertThat(rows, is(com.example.payments.config.KnownKeys.load().keys()));
    }

    @Test
    void theEnvironmentValuesTheTableQuotesAreTheEnvironmentFiles() throws Exception {
        List<String> wrong = new ArrayList<>();
        int quoted = 0;
        for (String line : Files.readAllLines(TABLE, StandardCharsets.UTF_8)) {
            if (!line.startsWith("| `") || line.substring(2).split(" \\| ")[0].contains(" / ")) {
                continue;
            }
            String[] cells = line.split(" \\| ");
            String key = cells[0].substring(2).replace("`", "").trim();
            Matcher value = ENVIRONMENT_VALUE.matcher(cells[1]);
            while (value.find()) {
                for (String environment : value.group(1).split(", | and ")) {
                    quoted++;
                    String expected = value.group(2).replace("`", "");
                    String actual = environmentConfig(environment).get(key).asString().orElse("(unset)");
                    if (!actual.equals(expected)) {
                        wrong.add(key + " in " + environment + ": table says " + expected + ", "
                                  + EnvironmentFiles.files(environment) + " " + actual);
                    }
                }
            }
        }
        assertThat("environment values quoted in the table", quoted, greaterThan(5));
        assertThat("environment values in " + TABLE + " that the environment files do not have", wrong, empty());
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"in-memory", "redis"})
    void theCodesFallbacksAreTheDefaultsOfApplicationYaml(String store) {
        // The fingerprint secret has no default in the code (a missing secret stops startup), and the keys of the
        // redis store (with its database) and the http authorizer are read only when selected: given to both, above application.yaml.
        Map<String, String> given = Map.of("idempotency.fingerprint-secret", "the-table-test-fingerprint-secret",
                                           "idempotency.store", store,
                                           "idempotency.redis.uri", "redis://127.0.0.1:1",
                                           "database.url", "jdbc:postgresql://127.0.0.1:1/payments",
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
        assertThat("warm-up.*", fallbacks.warmUp(), is(defaults.warmUp()));
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
                Matcher code = CODE.matcher(cell);
                table.put(key, cell.startsWith("`") && ticked.find() ? Optional.of(ticked.group(1))
                        : cell.startsWith("<code>") && code.find()
                        ? Optional.of(code.group(1).replaceAll("<!--.*?-->", "")) : Optional.empty());
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

    // The environment's files (config/base/base.yaml, then config/<env>/config.yaml for staging and prod), the last one
    // highest, above application.yaml.
    private static Config environmentConfig(String environment) throws Exception {
        List<io.helidon.config.spi.ConfigSource> sources = new ArrayList<>();
        for (Path file : EnvironmentFiles.files(environment).reversed()) {
            sources.add(ConfigSources.create(Files.readString(file, StandardCharsets.UTF_8),
                                             io.helidon.common.media.type.MediaTypes.APPLICATION_YAML));
        }
        sources.add(ConfigSources.classpath("application.yaml").build());
        return config(sources.toArray(io.helidon.config.spi.ConfigSource[]::new));
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
