package com.example.payments.authorization;

/**
 * A payment card as submitted. Holds the PAN and CVC in memory only for the authorizer call: {@link #toString()} masks
 * both, nothing serializes this type, and stored records keep only {@link #brand()} and {@link #last4()}.
 *
 * @param number      PAN, 12 to 19 digits, Luhn-valid
 * @param expiryMonth 1 to 12
 * @param expiryYear  four-digit year
 * @param cvc         3 or 4 digits
 */
public record Card(String number, int expiryMonth, int expiryYear, String cvc) {

    /**
     * The card brand derived from the PAN's issuer identification number.
     *
     * @return {@code visa}, {@code mastercard}, {@code amex}, {@code discover} or {@code unknown}
     */
    public String brand() {
        if (number.startsWith("4")) {
            return "visa";
        }
        int two = Integer.parseInt(number.substring(0, 2));
        int four = Integer.parseInt(number.substring(0, 4));
        if ((two >= 51 && two <= 55) || (four >= 2221 && four <= 2720)) {
            return "mastercard";
        }
        if (two == 34 || two == 37) {
            return "amex";
        }
        if (four == 6011 || two == 65) {
            return "discover";
        }
        return "unknown";
    }

    /**
     * The last four digits of the PAN, the only part of it that may be stored or shown (PCI DSS).
     *
     * @return four digits
     */
    public String last4() {
        return number.substring(number.length() - 4);
    }

    @Override
    public String toString() {
        return "Card[" + brand() + " ****" + last4() + ", expiry=" + expiryMonth + "/" + expiryYear + "]";
    }
}
