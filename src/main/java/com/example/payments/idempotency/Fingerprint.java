package com.example.payments.idempotency;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.HexFormat;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Computes request fingerprints: HMAC-SHA256 keyed with {@code idempotency.fingerprint-secret} over a request's
 * canonical form. A keyed hash, not a plain one, because the canonical form contains the PAN: a plain SHA-256 of a
 * 16-digit PAN with a known BIN is brute-forced in seconds, an HMAC without the secret is not.
 */
public final class Fingerprint {

    private static final String ALGORITHM = "HmacSHA256";

    private final SecretKeySpec key;

    private Fingerprint(byte[] secret) {
        this.key = new SecretKeySpec(secret, ALGORITHM);
    }

    /**
     * Creates a fingerprinter.
     *
     * @param secret the secret, UTF-8; at least 16 characters (enforced by {@link IdempotencySettings})
     * @return the fingerprinter
     */
    public static Fingerprint create(String secret) {
        return new Fingerprint(secret.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Fingerprints a canonical form.
     *
     * @param canonicalForm the request in canonical form
     * @return 64 lower-case hex characters
     */
    public String of(String canonicalForm) {
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(key);
            return HexFormat.of().formatHex(mac.doFinal(canonicalForm.getBytes(StandardCharsets.UTF_8)));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is required of every JDK", e);
        }
    }
}
