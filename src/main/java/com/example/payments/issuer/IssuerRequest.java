package com.example.payments.issuer;

/**
 * One authorization as the simulated issuer receives it.
 *
 * @param attemptId  the caller's attempt id, the issuer's idempotency key: the same attempt id always gets the same
 *                   answer
 * @param merchantId merchant
 * @param reference  the merchant's reference (order id), or {@code null}
 * @param amount     amount in minor units
 * @param currency   ISO 4217 code
 * @param cardNumber the PAN: used for the rules and a keyed hash, never logged or kept
 */
public record IssuerRequest(String attemptId, String merchantId, String reference, long amount, String currency,
                            String cardNumber) {

    @Override
    public String toString() {
        return "IssuerRequest[attemptId=" + attemptId + ", merchantId=" + merchantId + ", reference=" + reference
               + ", amount=" + amount + " " + currency + ", card=****"
               + cardNumber.substring(Math.max(0, cardNumber.length() - 4)) + "]";
    }
}
