package com.example.payments.idempotency;

/**
 * The result of claiming an idempotency key (IETF draft-ietf-httpapi-idempotency-key-header, section 2.6), mapped to
 * a status code by an exhaustive {@code switch}.
 */
public sealed interface Claim {

    /**
     * First request with this key: it is now IN_FLIGHT and owned by the caller, who must
     * {@link IdempotencyRegistry#complete complete} or {@link IdempotencyRegistry#release release} it.
     *
     * @param lookupKey merchant + idempotency key
     * @param owner     the owner token written into the record
     */
    record Acquired(String lookupKey, String owner) implements Claim {
    }

    /**
     * Same key, same fingerprint, completed: replay the stored response with {@code Idempotent-Replayed: true}.
     *
     * @param response the stored response
     */
    record Replay(StoredResponse response) implements Claim {
    }

    /** Same key, same fingerprint, still being processed: 409 with {@code Retry-After}. */
    record InFlight() implements Claim {
    }

    /** Same key, different fingerprint (in flight or completed): 422, the key was reused for another request. */
    record Mismatch() implements Claim {
    }

    /** The store holds {@code idempotency.max-keys} records: 503 with {@code Retry-After}; nothing is evicted early. */
    record Full() implements Claim {
    }
}
