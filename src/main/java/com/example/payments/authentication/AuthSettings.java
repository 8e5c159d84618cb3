package com.example.payments.authentication;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

import com.example.payments.config.ConfigValues;
import com.example.payments.config.ConfigurationException;

/**
 * Validated {@code auth.*} configuration: the API keys of {@link ApiKeyAuthenticator}.
 *
 * @param apiKeys     every accepted key: those of {@code auth.api-keys} (inline text, no default; the development key
 *                    of {@code config/dev} and the tests) and of the file {@code auth.api-keys-file} (no default; a
 *                    Kubernetes Secret mounted read-only, e.g. {@code /etc/payments-authorization-api-keys/api-keys}),
 *                    both in the {@link ApiKeys} text form; none means every business request gets 401
 * @param apiKeysFile {@code auth.api-keys-file}, when set
 */
public record AuthSettings(ApiKeys apiKeys, Optional<Path> apiKeysFile) {

    /** Inline keys. */
    public static final String API_KEYS = "auth.api-keys";
    /** The file of keys. */
    public static final String API_KEYS_FILE = "auth.api-keys-file";

    /**
     * Reads and validates the settings; reads the file once, at startup (a changed Secret takes effect at the next
     * rollout).
     *
     * @param values config reader
     * @return settings
     * @throws ConfigurationException naming the key when an entry is malformed, a hash repeats, or the file cannot be
     *                                read
     */
    public static AuthSettings create(ConfigValues values) {
        ApiKeys keys = values.string(API_KEYS).map(text -> ApiKeys.parse(text, API_KEYS)).orElse(ApiKeys.none());
        Optional<Path> file = values.string(API_KEYS_FILE).map(String::strip).map(Path::of);
        if (file.isPresent()) {
            keys = keys.and(ApiKeys.parse(read(file.get()), API_KEYS_FILE));
        }
        return new AuthSettings(keys, file);
    }

    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException | RuntimeException e) {
            throw new ConfigurationException(API_KEYS_FILE, "'" + file + "' cannot be read (" + e.getClass().getSimpleName()
                    + "); allowed: a readable file of API key hashes, e.g. the Secret payments-authorization-api-keys "
                    + "mounted at /etc/payments-authorization-api-keys");
        }
    }
}
