package com.example.payments.idempotency;

/**
 * The names stored data depends on, fixed for the life of every deployment: the labels that derive the attempt key and
 * the id key from the fingerprint secret ({@link RequestIdentities}), and the default Redis key prefix. Renaming the
 * service ({@code scripts/rename.sh}) must not change them: a new attempt-id label would give every retry in flight
 * across the deploy a new attempt id (the issuer would no longer deduplicate it), a new resource-id label would orphan
 * every recorded decision, and a new key prefix would hide every Redis record.
 *
 * <p>Their bytes are those the template first shipped with, which happen to contain its first artifact name. Each is
 * written as two concatenated literals so that no pattern of the rename script, which replaces that name wherever it
 * is spelled out, matches it; {@code RenameIT} checks that an attempt id computed by a renamed build is unchanged. Do
 * not "tidy" the concatenations into one literal.
 */
public final class StableNames {

    /** HMAC label deriving the attempt key from the fingerprint secret: {@value}. */
    public static final String ATTEMPT_ID_LABEL = "payments" + "-authorization attempt-id v1";

    /** HMAC label deriving the resource-id key from the fingerprint secret: {@value}. */
    public static final String RESOURCE_ID_LABEL = "payments" + "-authorization resource-id v1";

    /** Default of {@code idempotency.redis.key-prefix}: {@value}. */
    public static final String DEFAULT_KEY_PREFIX = "payments" + "-authorization:";

    private StableNames() {
    }
}
