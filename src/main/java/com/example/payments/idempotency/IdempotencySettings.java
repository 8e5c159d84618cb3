package com.example.payments.idempotency;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import java.util.Optional;

import com.example.payments.config.ConfigValues;
import com.example.payments.config.ConfigurationException;

/**
 * Validated {@code idempotency.*} configuration, the adapters' own keys aside ({@code idempotency.redis.*} and
 * {@code database.*} are read by their adapters' settings, kept beside {@code AppSettings}).
 *
 * @param store             {@code idempotency.store}, default {@code in-memory}; {@code redis} when several
 *                          replicas share the work; {@code postgres}, the system of record (staging and prod)
 * @param inFlightLease     {@code idempotency.in-flight-lease}, default PT10S: lifetime of an IN_FLIGHT record
 *                          without renewal; renewed every third of it while the request runs, so it only expires
 *                          when the owning process died
 * @param retention         {@code idempotency.retention}, default PT24H: how long a completed response is replayed
 * @param maxKeys           {@code idempotency.max-keys}, default 100000: records the in-memory store holds at most
 * @param fingerprintSecret {@code idempotency.fingerprint-secret}, no default: HMAC key for request fingerprints,
 *                          attempt ids and resource ids, at least 16 characters; from a Kubernetes Secret in every
 *                          real environment, the development value in {@code config/dev/config.yaml}. When unset, a
 *                          random secret of this process ({@code generatedSecret}), which only the embedded defaults
 *                          accept (checked by {@code AppSettings})
 * @param previousSecret    {@code idempotency.fingerprint-secret-previous}, no default: set only while rotating the
 *                          secret, so that keys recorded under the previous one still replay until they expire
 * @param merchantQuota     {@code idempotency.merchant-quota.max-in-flight} (default 100, at most max-records) and
 *                          {@code idempotency.merchant-quota.max-records} (default 10000): per merchant, on new claims
 *                          only; over either, 429 for that merchant alone
 * @param generatedSecret   {@code true} when {@code idempotency.fingerprint-secret} is unset and
 *                          {@code fingerprintSecret} was drawn at random for this process: request identities then
 *                          change when the process restarts
 */
public record IdempotencySettings(Store store, Duration inFlightLease, Duration retention, int maxKeys,
                                  String fingerprintSecret, Optional<String> previousSecret,
                                  Quota merchantQuota, boolean generatedSecret) {

    /**
     * The development fingerprint secret of {@code config/dev/config.yaml} (never of {@code application.yaml}, so
     * that no environment inherits it). Refused in staging and prod ({@code app.environment}), whichever store is
     * selected: a mistyped Secret reference must stop the rollout instead of fingerprinting every payment with a value
     * published in this repository.
     */
    public static final String DEVELOPMENT_SECRET = "local-development-only-fingerprint-secret";

    /** Shortest accepted fingerprint secret, in characters. */
    public static final int MIN_SECRET_LENGTH = 16;

    /**
     * The longest the store calls of one request can take while it holds its key, which the lease and the drain
     * must cover beyond {@code authorizer.timeout}.
     *
     * @param claim  the claim (its lease starts within it)
     * @param record recording the decision and completing the key, a fallback write included
     */
    public record StoreBounds(Duration claim, Duration record) {

        /**
         * Both together.
         *
         * @return claim + record
         */
        public Duration total() {
            return claim.plus(record);
        }
    }

    /** Where idempotency records live. */
    public enum Store {
        /** This process's memory: one replica. */
        IN_MEMORY,
        /** A Redis server shared by all replicas. */
        REDIS,
        /** A PostgreSQL database shared by all replicas: the system of record. */
        POSTGRES
    }

    /**
     * Reads and validates the settings.
     *
     * @param values config reader
     * @return settings
     * @throws ConfigurationException naming the key when a value is missing, unparsable or out of range
     */
    public static IdempotencySettings create(ConfigValues values) {
        Store store = values.oneOf("idempotency.store", Store.class, Store.IN_MEMORY);
        Optional<String> configured = values.string("idempotency.fingerprint-secret",
                                                    "a secret of at least " + MIN_SECRET_LENGTH + " characters");
        String secret = configured.orElseGet(IdempotencySettings::randomSecret);
        if (secret.length() < MIN_SECRET_LENGTH) {
            throw new ConfigurationException("idempotency.fingerprint-secret",
                    "too short (" + secret.length() + " characters); allowed: at least " + MIN_SECRET_LENGTH);
        }
        // Empty means "not rotating": a blanked Secret key must not stop the rollout that ends a rotation.
        Optional<String> previous = values.stringOrUnset("idempotency.fingerprint-secret-previous",
                                                  "the secret used before the current one, at least "
                                                  + MIN_SECRET_LENGTH + " characters");
        if (previous.isPresent() && (previous.get().length() < MIN_SECRET_LENGTH || previous.get().equals(secret))) {
            throw new ConfigurationException("idempotency.fingerprint-secret-previous", "not allowed ("
                    + previous.get().length() + " characters" + (previous.get().equals(secret) ? ", equal to "
                    + "idempotency.fingerprint-secret" : "") + "); allowed: unset, or the secret used before the "
                    + "current one, at least " + MIN_SECRET_LENGTH + " characters");
        }
        return new IdempotencySettings(store,
                values.positiveDuration("idempotency.in-flight-lease", Duration.ofSeconds(10)),
                values.positiveDuration("idempotency.retention", Duration.ofHours(24)),
                (int) values.longInRange("idempotency.max-keys", 100_000, 1, Integer.MAX_VALUE),
                secret, previous, quota(values), configured.isEmpty());
    }

    // 256 random bits: nobody can compute this process's identities, and nothing else can either (not a restart).
    private static String randomSecret() {
        byte[] bytes = new byte[32];
        new SecureRandom().nextBytes(bytes);
        return Base64.getEncoder().withoutPadding().encodeToString(bytes);
    }

    private static Quota quota(ConfigValues values) {
        int maxRecords = (int) values.longInRange("idempotency.merchant-quota.max-records", 10_000, 1,
                                                  Integer.MAX_VALUE);
        int maxInFlight = (int) values.longInRange("idempotency.merchant-quota.max-in-flight",
                                                   Math.min(100, maxRecords), 1, maxRecords);
        return new Quota(maxInFlight, maxRecords);
    }

    @Override
    public String toString() {
        return "IdempotencySettings[store=" + store + ", inFlightLease=" + inFlightLease + ", retention=" + retention
               + ", maxKeys=" + maxKeys + ", rotating=" + previousSecret.isPresent() + ", merchantQuota="
               + merchantQuota + "]";
    }
}
