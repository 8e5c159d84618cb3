package com.example.payments.deploy;

import java.io.IOException;
import java.nio.charset.MalformedInputException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import com.example.payments.authentication.ApiKeys;
import com.example.payments.authentication.AuthSettings;
import com.example.payments.config.ConfigValues;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.empty;
import static org.hamcrest.Matchers.hasKey;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * No API key found in this repository is accepted by staging or prod: the development key of {@code config/dev} and
 * the README, the tests' keys, any bearer token an example shows. Every such key is listed in
 * {@link ApiKeys#PUBLISHED}, which staging and prod refuse at startup, and the merged configuration of staging and
 * prod, with stand-in Secrets, accepts none of them.
 */
class PublishedKeysTest {

    // Keys in this project's format, and any bearer token of 16 characters or more in code, docs or scripts.
    private static final Pattern KEY = Pattern.compile("\\bpa_[a-z]+_[A-Za-z0-9_]{16,}");
    private static final Pattern BEARER = Pattern.compile("Bearer ([A-Za-z0-9._~+/-]{16,}=*)");
    private static final Pattern HASH = Pattern.compile("sha256:([0-9a-fA-F]{64})");
    private static final Set<String> SKIPPED = Set.of("target", ".git", ".tools", "node_modules");

    /** Every key-like string in the repository's text files, with the first file it was found in. */
    static Map<String, String> keysInTheRepository() throws IOException {
        Map<String, String> keys = new TreeMap<>();
        forEachTextFile((file, text) -> {
            for (Pattern pattern : new Pattern[] {KEY, BEARER}) {
                Matcher matcher = pattern.matcher(text);
                while (matcher.find()) {
                    keys.putIfAbsent(matcher.group(matcher.groupCount()), file);
                }
            }
        });
        return keys;
    }

    @Test
    void everyKeyInTheRepositoryIsAPublishedKeyThatStagingAndProdRefuse() throws IOException {
        Map<String, String> keys = keysInTheRepository();
        assertThat("the development key is found", keys, hasKey(com.example.payments.testing.TestCredentials.DEV_KEY));

        Map<String, String> unlisted = new TreeMap<>();
        keys.forEach((key, file) -> {
            if (!ApiKeys.PUBLISHED.contains(sha256(key))) {
                unlisted.put(file, key.substring(0, Math.min(12, key.length())) + "...");
            }
        });
        assertThat("keys not in ApiKeys.PUBLISHED (add their SHA-256 there)", unlisted.entrySet(), empty());
    }

    @Test
    void everyKeyHashInTheRepositoryIsOfAPublishedKey() throws IOException {
        Set<String> unknown = new TreeSet<>();
        forEachTextFile((file, text) -> {
            Matcher hash = HASH.matcher(text);
            while (hash.find()) {
                if (!ApiKeys.PUBLISHED.contains(hash.group(1).toLowerCase(java.util.Locale.ROOT))) {
                    unknown.add(file);
                }
            }
        });
        assertThat("files holding the hash of a key that is not published: a real key's hash belongs in a Secret",
                   unknown, empty());
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#productionLike")
    void stagingAndProdAcceptNoKeyOfTheRepository(String environment, @TempDir Path dir) throws IOException {
        RenderedOverlay overlay = RenderedOverlay.of(environment);
        assertTrue(EnvironmentConfig.of(overlay).config().get(AuthSettings.API_KEYS).asString().isEmpty(),
                   () -> environment + " inherits or sets inline API keys: they belong in its Secret");

        EnvironmentConfig config = EnvironmentConfig.of(overlay, EnvironmentConfig.standInSecrets(dir));
        config.validateAsTheServiceDoes();
        ApiKeys accepted = AuthSettings.create(ConfigValues.create(config.config())).apiKeys();
        for (String key : keysInTheRepository().keySet()) {
            assertEquals(java.util.Optional.empty(), accepted.merchantOf(key),
                         () -> environment + " accepts a key found in the repository");
        }
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#productionLike")
    void stagingAndProdRefuseToStartWhenTheirSecretHoldsAKeyOfTheRepository(String environment, @TempDir Path dir)
            throws IOException {
        for (String key : keysInTheRepository().keySet()) {
            EnvironmentConfig config = EnvironmentConfig.of(RenderedOverlay.of(environment),
                    EnvironmentConfig.standInSecrets(dir, "sha256:" + sha256(key) + " m_123"));
            RuntimeException refused = assertThrows(RuntimeException.class, config::validateAsTheServiceDoes);
            assertThat(refused.getMessage(), startsWith("auth.api-keys-file: holds an API key published in this "
                                                        + "repository"));
        }
    }

    private static String sha256(String key) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                                                     .digest(key.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private interface FileVisitor {
        void visit(String file, String text);
    }

    private static void forEachTextFile(FileVisitor visitor) throws IOException {
        Path root = DeployTools.projectRoot();
        try (Stream<Path> files = Files.walk(root)) {
            for (Path file : files.filter(Files::isRegularFile).toList()) {
                Path relative = root.relativize(file);
                if (SKIPPED.contains(relative.getName(0).toString())) {
                    continue;
                }
                try {
                    visitor.visit(relative.toString(), Files.readString(file, StandardCharsets.UTF_8));
                } catch (MalformedInputException binary) {
                    // not text: no key is typed into a binary file
                }
            }
        }
    }
}
