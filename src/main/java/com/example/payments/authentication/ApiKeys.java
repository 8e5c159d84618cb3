package com.example.payments.authentication;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

import com.example.payments.config.ConfigurationException;

/**
 * The API keys the service accepts, each known only by its SHA-256 hash and mapped to the merchant it acts for.
 *
 * <p>Text form, one entry per line (or separated by commas), {@code #} starts a comment:
 * <pre>
 * sha256:9702b04ac8da313c8ec0784e54e26e65016c0a9c0942463b0c6fb9f354071ab8 m_123
 * </pre>
 * The hash is lower- or upper-case hex of SHA-256 over the key's UTF-8 bytes ({@code printf %s "$KEY" | sha256sum}).
 * A plain hash suffices because keys are random with at least 128 bits: nothing can be brute-forced from the hash,
 * unlike a password (docs/security.md). One merchant may have several keys (rotation); one key never maps to two
 * merchants.
 *
 * <p>A presented key is hashed and compared with every configured hash in constant time
 * ({@link MessageDigest#isEqual}), without stopping at a match, so the time taken says nothing about which entry
 * matched or how much of a hash did.
 */
public final class ApiKeys {

    /**
     * SHA-256 hashes of every API key published in this repository (the development key of {@code config/dev} and
     * the README, the keys of the test configuration). Staging and prod refuse to start when one of them is
     * configured; {@code PublishedKeysTest} fails when the repository holds a key not listed here.
     */
    public static final Set<String> PUBLISHED = Set.of(
            // pa_dev_...: config/dev/config.yaml, README.md, the tests; merchant m_123
            "9702b04ac8da313c8ec0784e54e26e65016c0a9c0942463b0c6fb9f354071ab8",
            // pa_test_m456_...: the tests' second merchant, m_456
            "0bc265bed5200a189743bf1c757299a24ce9e8f49d6c224400a37e6ce140e338");

    // The merchant ids a request body may name (RequestValidator): a key for any other could never authorize.
    private static final Pattern MERCHANT_ID = Pattern.compile("[A-Za-z0-9._-]{1,64}");
    private static final Pattern SHA256 = Pattern.compile("sha256:[0-9a-fA-F]{64}");
    private static final String FORMAT = "allowed: one 'sha256:<64 hex digits> <merchant-id>' per line, the merchant "
                                         + "id 1 to 64 characters of A-Z, a-z, 0-9, '.', '_', '-'";

    private final List<Entry> entries;

    /**
     * One configured key.
     *
     * @param sha256     SHA-256 of the key, 32 bytes
     * @param merchantId the merchant it acts for
     * @param source     the config key it came from, for error messages ({@code auth.api-keys} or
     *                   {@code auth.api-keys-file})
     */
    private record Entry(byte[] sha256, String merchantId, String source) {
    }

    private ApiKeys(List<Entry> entries) {
        this.entries = List.copyOf(entries);
    }

    /**
     * No keys: every request is refused.
     *
     * @return an empty set of keys
     */
    public static ApiKeys none() {
        return new ApiKeys(List.of());
    }

    /**
     * Parses keys in the text form.
     *
     * @param text   entries, one per line or comma-separated
     * @param source the config key they come from, named in errors
     * @return the keys
     * @throws ConfigurationException naming {@code source} and the line number (never its content, which could be a
     *                                key pasted by mistake) when an entry is malformed or a hash repeats
     */
    public static ApiKeys parse(String text, String source) {
        List<Entry> entries = new ArrayList<>();
        String[] lines = text.split("\\R|,", -1);
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i].replaceFirst("#.*", "").strip();
            if (line.isEmpty()) {
                continue;
            }
            String[] fields = line.split("\\s+");
            if (fields.length != 2 || !SHA256.matcher(fields[0]).matches()
                || !MERCHANT_ID.matcher(fields[1]).matches()) {
                throw new ConfigurationException(source, "entry " + (i + 1) + " is malformed; " + FORMAT);
            }
            entries.add(new Entry(HexFormat.of().parseHex(fields[0].substring("sha256:".length())), fields[1],
                                  source));
        }
        return none().and(new ApiKeys(entries));
    }

    /**
     * These keys and others together.
     *
     * @param more other keys
     * @return both
     * @throws ConfigurationException naming the later source when a hash appears twice
     */
    public ApiKeys and(ApiKeys more) {
        List<Entry> all = new ArrayList<>(entries);
        for (Entry entry : more.entries) {
            if (all.stream().anyMatch(e -> MessageDigest.isEqual(e.sha256(), entry.sha256()))) {
                throw new ConfigurationException(entry.source(), "the same key hash is configured twice (merchant "
                        + entry.merchantId() + "); allowed: each key once, mapped to one merchant");
            }
            all.add(entry);
        }
        return new ApiKeys(all);
    }

    /**
     * The merchant a presented key acts for.
     *
     * @param presented the key as the client sent it
     * @return the merchant, or empty when no configured hash matches
     */
    public Optional<String> merchantOf(String presented) {
        byte[] hash = sha256(presented);
        String merchant = null;
        for (Entry entry : entries) {
            // No early exit: every entry is compared, whatever matched.
            if (MessageDigest.isEqual(entry.sha256(), hash)) {
                merchant = entry.merchantId();
            }
        }
        return Optional.ofNullable(merchant);
    }

    /**
     * How many keys are configured.
     *
     * @return count
     */
    public int size() {
        return entries.size();
    }

    /**
     * The config key of the first entry whose key is published in this repository ({@link #PUBLISHED}).
     *
     * @return e.g. {@code auth.api-keys}, or empty when none is
     */
    public Optional<String> publishedKeySource() {
        return entries.stream()
                .filter(entry -> PUBLISHED.contains(HexFormat.of().formatHex(entry.sha256())))
                .map(Entry::source)
                .findFirst();
    }

    /**
     * SHA-256 of a key's UTF-8 bytes.
     *
     * @param key the key
     * @return 32 bytes
     */
    static byte[] sha256(String key) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JDK", e);
        }
    }

    @Override
    public String toString() {
        return "ApiKeys[" + entries.size() + " keys]";
    }
}
