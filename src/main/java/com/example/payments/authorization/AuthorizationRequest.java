package com.example.payments.authorization;

/**
 * A validated {@code POST /v1/authorizations} body.
 *
 * @param merchantId merchant identifier, 1-64 characters of {@code [A-Za-z0-9._-]}
 * @param reference  merchant's own reference (e.g. order id), up to 128 characters, or {@code null}
 * @param amount     positive amount in minor units with its ISO 4217 currency
 * @param card       the card; PAN and CVC never leave memory
 */
public record AuthorizationRequest(String merchantId, String reference, Amount amount, Card card) {

    /**
     * The canonical form the idempotency fingerprint is computed over: fixed field order, one field per line, so
     * whitespace and field order of the submitted JSON do not matter. The CVC is excluded: card networks forbid
     * keeping it, and a retry must not become a mismatch because a wallet re-prompted for it.
     *
     * @return canonical text; contains the PAN, so it is only ever fed into the HMAC, never logged or stored
     */
    public String canonicalForm() {
        return "merchantId=" + merchantId + '\n'
               + "reference=" + (reference == null ? "" : reference) + '\n'
               + "amount.value=" + amount.value() + '\n'
               + "amount.currency=" + amount.currency() + '\n'
               + "card.number=" + card.number() + '\n'
               + "card.expiryMonth=" + card.expiryMonth() + '\n'
               + "card.expiryYear=" + card.expiryYear() + '\n';
    }
}
