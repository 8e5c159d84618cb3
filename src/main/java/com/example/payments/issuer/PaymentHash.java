package com.example.payments.issuer;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Base64;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The business payment of an issuer call as the {@link IssuerLedger} keeps it: a keyed hash (HMAC-SHA256) of merchant,
 * reference, amount, currency and card number, so that two attempts of one payment are recognised without the ledger
 * holding a card number. The key is 32 random bytes made when the hash is created (the ledger makes one at startup)
 * and never leaves it: the same payment hashes alike under this instance only.
 *
 * <p>Not thread-safe (one {@link Mac} is reused): the ledger calls it under its lock.
 */
final class PaymentHash {

    private static final String HMAC = "HmacSHA256";

    private final Mac mac;

    /**
     * A hash with a fresh random key.
     *
     * @throws IllegalStateException when the JDK has no HmacSHA256 (every JDK is required to)
     */
    PaymentHash() {
        byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        try {
            this.mac = Mac.getInstance(HMAC);
            this.mac.init(new SecretKeySpec(key, HMAC));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(HMAC + " is required of every JDK", e);
        }
    }

    /**
     * The payment of a call.
     *
     * @param request the call
     * @return 43 characters of unpadded Base64 (32 bytes), the same for every call of the same payment
     */
    String of(IssuerRequest request) {
        // Length-prefixed fields, so that no two different payments share an encoding.
        StringBuilder fields = new StringBuilder();
        for (String field : new String[] {request.merchantId(), request.reference(), Long.toString(request.amount()),
                                          request.currency(), request.cardNumber()}) {
            fields.append(field == null ? "-" : field.length() + ":" + field).append(';');
        }
        byte[] digest = mac.doFinal(fields.toString().getBytes(StandardCharsets.UTF_8));
        return Base64.getEncoder().withoutPadding().encodeToString(digest);
    }
}
