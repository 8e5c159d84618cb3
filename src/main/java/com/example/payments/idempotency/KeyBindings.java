package com.example.payments.idempotency;

import java.util.List;

/**
 * The durable binding of each idempotency key to the request it was first used with, kept by the system of record
 * for as long as the resources it creates ({@code database.PostgresKeyBindings}; {@link InMemoryKeyBindings} in
 * development). The registry forgets keys after {@code idempotency.retention}, and a Redis registry can lose them
 * earlier (a flush, a failover); the binding does not, so a different request under a used key is 422 and never a
 * second payment.
 *
 * <p>Called after a key is claimed and before the work runs: one insert-if-absent of (lookup key, fingerprint). A
 * binding this claim made is removed again only when the key is released before the work began (the lease or the
 * drain deadline could not cover it): nothing was done, so the key may carry another request. Once the work began it
 * stays, whatever the answer (a 502 or 504 whose outcome the issuer left unknown, a refusal, the drain's cut-off):
 * the retry with the same body resolves that outcome under the same attempt id, and another body is 422.
 */
public interface KeyBindings {

    /**
     * What a bind found.
     *
     * @param identity index of the identity whose fingerprint the key is bound to, {@code -1} when it is bound to
     *                 another request (422)
     * @param created  {@code true} when this call made the binding (and {@link #unbind} may remove it)
     */
    record Bound(int identity, boolean created) {
    }

    /**
     * Binds a lookup key (operation, merchant, parent and key) to one of the request's fingerprints, unless it is
     * bound already.
     *
     * @param lookupKey  the lookup key ({@link RequestIdentities#lookupKey})
     * @param identities the request's identities, current secret first
     * @param preferred  index of the identity to bind a new key to (the claim's)
     * @return the identity the key is bound to (or {@code -1}: another request, answered 422) and whether this call
     *         bound it
     * @throws IdempotencyStore.UnavailableException when the store cannot be reached (503)
     * @throws StoreFullException when an in-memory store is full (503)
     */
    Bound bind(String lookupKey, List<Identity> identities, int preferred);

    /**
     * Removes a binding this process made, when its key was released before the work began.
     *
     * @param lookupKey   the lookup key
     * @param fingerprint the bound fingerprint: a binding to another one stays
     * @throws IdempotencyStore.UnavailableException when the store cannot be reached
     */
    void unbind(String lookupKey, String fingerprint);

    /**
     * The index of the identity with a fingerprint.
     *
     * @param identities the request's identities
     * @param fingerprint the bound fingerprint
     * @return its index, or {@code -1} when none has it
     */
    static int indexOf(List<Identity> identities, String fingerprint) {
        for (int i = 0; i < identities.size(); i++) {
            if (identities.get(i).fingerprint().equals(fingerprint)) {
                return i;
            }
        }
        return -1;
    }
}
