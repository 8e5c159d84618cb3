package com.example.payments.config;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import io.helidon.config.Config;
import io.helidon.config.ConfigSources;

/**
 * The environment's YAML files, named by the environment variable {@code APP_CONFIG_FILE}: one path, or several
 * separated by commas, where a later file overrides the keys an earlier one sets (staging and prod mount
 * {@code base.yaml,config.yaml}: what they share, then what is theirs). Blanks around a path are ignored; a path
 * cannot contain a comma. Without {@code APP_CONFIG_FILE} there is none, and {@code application.yaml} alone applies.
 *
 * @param value the variable's value as given, for messages, e.g.
 *              {@code /etc/payments-authorization/base.yaml,/etc/payments-authorization/config.yaml}; empty when unset
 * @param paths the files, in the order given: lowest precedence first
 */
public record AppConfigFiles(String value, List<String> paths) {

    /** The environment variable that names the files. */
    public static final String VARIABLE = "APP_CONFIG_FILE";

    /**
     * Canonical constructor.
     *
     * @param value the variable's value as given
     * @param paths the files, lowest precedence first
     */
    public AppConfigFiles {
        paths = List.copyOf(paths);
    }

    /**
     * Parses a value of {@code APP_CONFIG_FILE}.
     *
     * @param value the value, or {@code null} / blank when the variable is unset
     * @return the files; none for {@code null} or blank
     * @throws ConfigurationException naming {@code APP_CONFIG_FILE} when a comma-separated entry is blank
     */
    public static AppConfigFiles parse(String value) {
        if (value == null || value.isBlank()) {
            return new AppConfigFiles("", List.of());
        }
        List<String> paths = Stream.of(value.split(",", -1)).map(String::strip).toList();
        if (paths.stream().anyMatch(String::isEmpty)) {
            throw new ConfigurationException(VARIABLE, "'" + value + "' has an empty entry; allowed: one path, or "
                    + "several separated by commas, later files overriding earlier ones");
        }
        return new AppConfigFiles(value, paths);
    }

    /**
     * Whether {@code APP_CONFIG_FILE} names any file.
     *
     * @return {@code false} when it was unset or blank
     */
    public boolean isEmpty() {
        return paths.isEmpty();
    }

    /**
     * Refuses a file that does not exist or is not a regular file.
     *
     * @throws ConfigurationException naming {@code APP_CONFIG_FILE} and the first such path
     */
    public void checkReadable() {
        for (String path : paths) {
            if (!Files.isRegularFile(Path.of(path))) {
                throw new ConfigurationException(VARIABLE, "'" + path + "' is not a readable file");
            }
        }
    }

    /**
     * Adds the files to a configuration being built, each below the sources added before and the last file above the
     * earlier ones (Helidon ranks sources in the order they are added, highest first).
     *
     * @param builder the configuration being built
     * @return the builder
     */
    public Config.Builder addTo(Config.Builder builder) {
        for (String path : paths.reversed()) {
            builder.addSource(ConfigSources.file(path));
        }
        return builder;
    }

    /**
     * The files alone, merged as the service merges them: what they declare, without defaults, environment variables
     * or system properties. Files that are not readable are skipped ({@link #checkReadable} reports them).
     *
     * @return the merged files; empty when there is none
     */
    public Config filesOnly() {
        List<String> readable = paths.stream().filter(path -> Files.isRegularFile(Path.of(path))).toList();
        if (readable.isEmpty()) {
            return Config.empty();
        }
        Config.Builder builder = Config.builder().disableEnvironmentVariablesSource().disableSystemPropertiesSource();
        for (String path : readable.reversed()) {
            builder.addSource(ConfigSources.file(path));
        }
        return builder.build();
    }
}
