package com.example.payments.testing;

import java.util.Map;

/**
 * The credentials of the test configuration (docs/security.md): the development key of {@code config/dev} for merchant
 * {@code m_123}, a second key for merchant {@code m_456}, and the development fingerprint secret of
 * {@code config/dev} ({@code application.yaml} has none). All are published in this repository, so staging and prod
 * refuse to start with any of them ({@code ApiKeys.PUBLISHED}, checked by {@code PublishedKeysTest};
 * {@code EnvironmentRules}).
 *
 * <p>{@link #config()} is added to every service the tests start ({@code TestService}, {@link ServiceProcess}) unless
 * a test configures keys itself; {@link Http} sends {@link #AUTHORIZATION} by default.
 */
public final class TestCredentials {

    /** The development key ({@code config/dev/config.yaml}, README): merchant {@code m_123}. */
    public static final String DEV_KEY = "pa_dev_4Kq9Xz2Lm7Pw3Rt8Vb6Nc1Hs5Jd0Fg";
    /** The tests' second merchant, {@code m_456}. */
    public static final String OTHER_KEY = "pa_test_m456_8Ty3Wq6Ez1Ru4Io7Pa2Sd5Fg";
    /** The merchant of {@link #DEV_KEY}, the one {@link Http#VALID_BODY} names. */
    public static final String MERCHANT = "m_123";
    /** The merchant of {@link #OTHER_KEY}. */
    public static final String OTHER_MERCHANT = "m_456";
    /** The {@code Authorization} header value for {@link #DEV_KEY}. */
    public static final String AUTHORIZATION = bearer(DEV_KEY);
    /** The header line for {@link #DEV_KEY}, for requests written by hand over a socket. */
    public static final String HEADER_LINE = "Authorization: " + AUTHORIZATION + "\r\n";
    /** {@code auth.api-keys} of the test configuration: both keys, as SHA-256 hashes. */
    public static final String API_KEYS = "sha256:9702b04ac8da313c8ec0784e54e26e65016c0a9c0942463b0c6fb9f354071ab8 "
                                          + MERCHANT + ",sha256:0bc265bed5200a189743bf1c757299a24ce9e8f49d6c224400a37e6ce140e338 "
                                          + OTHER_MERCHANT;

    /** {@code idempotency.fingerprint-secret} of the test configuration: the development one of config/dev. */
    public static final String FINGERPRINT_SECRET = "local-development-only-fingerprint-secret";

    private TestCredentials() {
    }

    /**
     * The test configuration's credentials.
     *
     * @return {@code auth.api-keys} with both keys, and {@code idempotency.fingerprint-secret}
     */
    public static Map<String, String> config() {
        return Map.of("auth.api-keys", API_KEYS, "idempotency.fingerprint-secret", FINGERPRINT_SECRET);
    }

    /**
     * An {@code Authorization} header value.
     *
     * @param key an API key
     * @return {@code Bearer <key>}
     */
    public static String bearer(String key) {
        return "Bearer " + key;
    }
}
