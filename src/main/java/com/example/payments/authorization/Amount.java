package com.example.payments.authorization;

/**
 * A money amount.
 *
 * @param value    amount in minor units (cents for EUR), {@code > 0}
 * @param currency ISO 4217 alphabetic code, e.g. {@code EUR}
 */
public record Amount(long value, String currency) {
}
