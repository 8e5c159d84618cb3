package com.example.payments.idempotency;

/**
 * The result of claiming an idempotency key (IETF draft-ietf-httpapi-idempotency-key-header, section 2.6), mapped to
 * a status code by an exhaustive {@code switch}. A claim first looks for a recorded decision (the recovery point), so
 * a decision whose key was never completed is replayed, not made again.
 */
public sealed interface Claim {

    /**
     * First request with this key, or the first since its lease lapsed: it is now IN_FLIGHT and owned by the caller,
     * who must record a decision or release it.
     *
     * @param lookupKey operation + merchant + idempotency key ({@link RequestIdentities#lookupKey})
     * @param token     fencing token of this claim: grows per key, even across a store that lost its data; every
     *                  later write carries it and is refused once another claim holds the key
     * @param identity  index of the request's {@link Identity} the key is held under (0 = current secret)
     * @param bound     the key's durable binding when the store made it in the same step (PostgreSQL as the system
     *                  of record), {@code null} when the caller binds it next ({@link KeyBindings})
     */
    record Acquired(String lookupKey, long token, int identity, KeyBindings.Bound bound) implements Claim {

        /**
         * An acquisition whose key the caller binds next.
         *
         * @param lookupKey operation + merchant + idempotency key
         * @param token     fencing token of this claim
         * @param identity  index of the identity the key is held under
         */
        public Acquired(String lookupKey, long token, int identity) {
            this(lookupKey, token, identity, null);
        }
    }

    /**
     * A decision is recorded for this request: answer it with {@code Idempotent-Replayed: true}.
     *
     * @param decision  the recorded decision
     * @param recovered {@code true} when this claim found the decision of a key that was never completed (lapsed lease,
     *                  lost record, failed completion) and completed the key with it
     */
    record Replay(Decision decision, boolean recovered) implements Claim {
    }

    /** Same key, same request, still being processed under a live lease: 409 with {@code Retry-After}. */
    record InFlight() implements Claim {
    }

    /** Same key, different request (in flight or completed): 422, the key was reused for another request. */
    record Mismatch() implements Claim {
    }

    /** The store holds {@code idempotency.max-keys} records: 503 with {@code Retry-After}; nothing is evicted early. */
    record Full() implements Claim {
    }

    /**
     * Taking the key anew would exceed the merchant's {@link Quota}: 429 with {@code Retry-After} for that merchant
     * only; nothing was written.
     *
     * @param limit the bound it ran into
     */
    record OverQuota(Quota.Limit limit) implements Claim {
    }
}
