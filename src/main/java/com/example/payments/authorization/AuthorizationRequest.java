package com.example.payments.authorization;

import com.example.payments.idempotency.CanonicalForm;

/**
 * A validated {@code POST /v1/authorizations} body.
 *
 * @param merchantId    merchant identifier, 1-64 characters of {@code [A-Za-z0-9._-]}
 * @param reference     merchant's own reference (e.g. order id), up to 128 characters, or {@code null} when absent or
 *                      sent as JSON {@code null}
 * @param referenceSent whether the body had a {@code reference} member at all (with {@code reference == null}: it was
 *                      JSON {@code null}); only the fingerprint tells the two apart
 * @param amount        positive amount in minor units with its ISO 4217 currency
 * @param card          the card; PAN and CVC never leave memory
 */
public record AuthorizationRequest(String merchantId, String reference, boolean referenceSent, Amount amount,
                                   Card card) {

    /**
     * A request whose reference was either sent as a string or not sent at all ({@code null}).
     *
     * @param merchantId merchant identifier
     * @param reference  merchant's own reference, {@code null} when absent
     * @param amount     the amount
     * @param card       the card
     */
    public AuthorizationRequest(String merchantId, String reference, Amount amount, Card card) {
        this(merchantId, reference, reference != null, amount, card);
    }

    /**
     * The canonical form the idempotency fingerprint is computed over ({@link CanonicalForm}): fixed field order, one
     * field per line, absent, {@code null} and empty {@code reference} told apart. The CVC is excluded: card networks
     * forbid keeping it, and a retry must not become a mismatch because a wallet re-prompted for it.
     *
     * @return canonical text; contains the PAN, so it is only ever fed into the HMAC, never logged or stored
     */
    public String canonicalForm() {
        return CanonicalForm.builder()
                .field("merchantId", merchantId)
                .optional("reference", referenceSent, reference)
                .field("amount.value", amount.value())
                .field("amount.currency", amount.currency())
                .field("card.number", card.number())
                .field("card.expiryMonth", card.expiryMonth())
                .field("card.expiryYear", card.expiryYear())
                .build();
    }
}
