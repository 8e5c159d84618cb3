package com.example.payments.config;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.is;
import static org.junit.jupiter.api.Assertions.assertThrows;

class AppConfigFilesTest {

    @TempDir
    Path dir;

    @Test
    void severalFilesAreCommaSeparatedAndTheLaterOneOverrides() throws Exception {
        Path base = dir.resolve("base.yaml");
        Path environment = dir.resolve("config.yaml");
        Files.writeString(base, "app:\n  environment: staging\nlogging:\n  format: json\n");
        Files.writeString(environment, "app:\n  environment: prod\n");

        AppConfigFiles files = AppConfigFiles.parse(base + " , " + environment);

        assertThat(files.paths(), is(List.of(base.toString(), environment.toString())));
        assertThat(files.filesOnly().get("app.environment").asString().get(), is("prod"));
        assertThat(files.filesOnly().get("logging.format").asString().get(), is("json"));
    }

    @Test
    void unsetOrBlankNamesNoFile() {
        assertThat(AppConfigFiles.parse(null).isEmpty(), is(true));
        assertThat(AppConfigFiles.parse("  ").isEmpty(), is(true));
        assertThat(AppConfigFiles.parse(null).filesOnly().get("app.environment").exists(), is(false));
    }

    @Test
    void anEmptyEntryIsRefusedNamingTheVariable() {
        ConfigurationException e = assertThrows(ConfigurationException.class,
                                                () -> AppConfigFiles.parse("base.yaml,,config.yaml"));
        assertThat(e.getMessage(), is("APP_CONFIG_FILE: 'base.yaml,,config.yaml' has an empty entry; allowed: one path, "
                                      + "or several separated by commas, later files overriding earlier ones"));
    }

    @Test
    void aMissingFileIsRefusedNamingIt() throws Exception {
        Path base = dir.resolve("base.yaml");
        Files.writeString(base, "app:\n  environment: staging\n");
        Path missing = dir.resolve("missing.yaml");

        ConfigurationException e = assertThrows(ConfigurationException.class,
                                                () -> AppConfigFiles.parse(base + "," + missing).checkReadable());

        assertThat(e.getMessage(), is("APP_CONFIG_FILE: '" + missing + "' is not a readable file"));
    }
}
