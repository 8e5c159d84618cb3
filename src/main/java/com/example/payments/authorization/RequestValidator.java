package com.example.payments.authorization;

import java.time.Clock;
import java.time.YearMonth;
import java.util.ArrayList;
import java.util.Currency;
import java.util.Iterator;
import java.util.List;
import java.util.regex.Pattern;

import com.example.payments.carddata.PanDetector;
import com.example.payments.http.JsonBody;
import com.example.payments.http.Problem.FieldError;
import com.fasterxml.jackson.databind.JsonNode;

/**
 * Validates a parsed {@code POST /v1/authorizations} body and collects every field error with its JSON pointer.
 *
 * <p>Rules: {@code merchantId} present; {@code amount.value} an integer {@code > 0} in minor units;
 * {@code amount.currency} an ISO 4217 code; {@code card.number} a Luhn-valid string of 12 to 19 digits;
 * {@code card.expiryYear} from 2000 to 2999 and the expiry not in the past; {@code card.cvc} 3 or 4 digits; the
 * free-text fields {@code merchantId} and {@code reference} hold no card number ({@link PanDetector}: 13 to 19
 * digits passing the Luhn check, also split by spaces, dashes, dots, commas or other separators); {@code reference}
 * at most 128 code points, none of them a control, format, surrogate, private-use or unassigned character or a
 * noncharacter. Error details never quote the submitted value: a card number
 * typed as a JSON number, a PAN one digit short or a CVC in the wrong field must not come back in a response or a log.
 */
final class RequestValidator {

    private static final Pattern MERCHANT_ID = Pattern.compile("[A-Za-z0-9._-]{1,64}");
    private static final Pattern PAN = Pattern.compile("[0-9]{12,19}");
    private static final Pattern CVC = Pattern.compile("[0-9]{3,4}");
    private static final Pattern CURRENCY = Pattern.compile("[A-Z]{3}");
    private static final int MAX_REFERENCE = 128;
    // The members each object may have (the OpenAPI document's additionalProperties: false): any other is a 400
    // naming it, so that a misspelled optional member ("refrence") is never silently dropped.
    private static final List<String> REQUEST_MEMBERS = List.of("merchantId", "reference", "amount", "card");
    private static final List<String> AMOUNT_MEMBERS = List.of("value", "currency");
    private static final List<String> CARD_MEMBERS = List.of("number", "expiryMonth", "expiryYear", "cvc");
    /** The members of a capture's body. */
    static final List<String> CAPTURE_MEMBERS = List.of("amount");
    // The bounds of card.expiryYear: the OpenAPI document states the same ones, and the 400's detail names them.
    private static final int MIN_YEAR = 2000;
    private static final int MAX_YEAR = 2999;
    // Free text is stored, replayed and returned by GET: a card number there would be kept in clear (PCI DSS 3.5.1).
    private static final String NO_CARD_DATA = "must not contain a card number (13 to 19 digits passing the Luhn "
            + "check, also split by spaces, dashes or other separators); card data goes in #/card only";

    private final Clock clock;

    RequestValidator(Clock clock) {
        this.clock = clock;
    }

    /** The outcome of validating one body. */
    sealed interface Result {
    }

    /**
     * A valid body.
     *
     * @param request the typed request
     */
    record Valid(AuthorizationRequest request) implements Result {
    }

    /**
     * An invalid body.
     *
     * @param errors every field error found, in body order
     */
    record Invalid(List<FieldError> errors) implements Result {
    }

    Result validate(JsonNode body) {
        List<FieldError> errors = new ArrayList<>();
        if (body == null || !body.isObject()) {
            return new Invalid(List.of(FieldError.body("#", "the body must be a JSON object")));
        }
        unknownMembers(body, "#", REQUEST_MEMBERS, errors);
        String merchantId = text(body, "merchantId");
        if (merchantId == null || !MERCHANT_ID.matcher(merchantId).matches()) {
            errors.add(FieldError.body("#/merchantId", "required: 1 to 64 characters of A-Z, a-z, 0-9, '.', '_', '-'"));
        } else if (PanDetector.containsPan(merchantId)) {
            errors.add(FieldError.body("#/merchantId", NO_CARD_DATA));
        }
        String reference = null;
        JsonNode referenceNode = body.get("reference");
        if (referenceNode != null && !referenceNode.isNull()) {
            reference = referenceNode.isTextual() ? referenceNode.textValue() : null;
            // A card number first: one disguised with invisible separators is named for what it is.
            if (reference != null && PanDetector.containsPan(reference)) {
                errors.add(FieldError.body("#/reference", NO_CARD_DATA));
                reference = null;
            } else if (reference == null || reference.codePointCount(0, reference.length()) > MAX_REFERENCE
                    || !reference.codePoints().allMatch(RequestValidator::printable)) {
                errors.add(FieldError.body("#/reference", "optional: a string of at most " + MAX_REFERENCE
                                                           + " printable characters"));
                reference = null;
            }
        }
        Amount amount = amount(body.get("amount"), errors);
        Card card = card(body.get("card"), errors);
        if (!errors.isEmpty()) {
            return new Invalid(List.copyOf(errors));
        }
        return new Valid(new AuthorizationRequest(merchantId, reference, referenceNode != null, amount, card));
    }

    Amount amount(JsonNode node, List<FieldError> errors) {
        if (node == null || !node.isObject()) {
            errors.add(FieldError.body("#/amount", "required: an object with value and currency"));
            return null;
        }
        unknownMembers(node, "#/amount", AMOUNT_MEMBERS, errors);
        JsonNode value = node.get("value");
        long minor = 0;
        if (value == null || !value.isIntegralNumber() || !value.canConvertToLong() || value.longValue() <= 0) {
            errors.add(FieldError.body("#/amount/value", "required: an integer > 0 in minor units (1299 = 12.99)"));
        } else {
            minor = value.longValue();
        }
        String currency = text(node, "currency");
        if (currency == null || !CURRENCY.matcher(currency).matches() || !isIso4217(currency)) {
            errors.add(FieldError.body("#/amount/currency", "required: an ISO 4217 currency code such as EUR"));
        }
        return new Amount(minor, currency);
    }

    private Card card(JsonNode node, List<FieldError> errors) {
        if (node == null || !node.isObject()) {
            errors.add(FieldError.body("#/card", "required: an object with number, expiryMonth, expiryYear and cvc"));
            return null;
        }
        unknownMembers(node, "#/card", CARD_MEMBERS, errors);
        String number = text(node, "number");
        if (number == null || !PAN.matcher(number).matches() || !PanDetector.luhnValid(number, 0, number.length())) {
            errors.add(FieldError.body("#/card/number", "required: a string of 12 to 19 digits with a valid Luhn "
                                                        + "check digit"));
        }
        int month = intField(node, "expiryMonth", 1, 12);
        if (month < 0) {
            errors.add(FieldError.body("#/card/expiryMonth", "required: an integer from 1 to 12"));
        }
        int year = intField(node, "expiryYear", MIN_YEAR, MAX_YEAR);
        if (year < 0) {
            errors.add(FieldError.body("#/card/expiryYear", "required: an integer year from " + MIN_YEAR + " to "
                                                            + MAX_YEAR));
        }
        if (month > 0 && year > 0) {
            YearMonth current = YearMonth.now(clock);
            if (YearMonth.of(year, month).isBefore(current)) {
                String pointer = year < current.getYear() ? "#/card/expiryYear" : "#/card/expiryMonth";
                errors.add(FieldError.body(pointer, "the card has expired"));
            }
        }
        String cvc = text(node, "cvc");
        if (cvc == null || !CVC.matcher(cvc).matches()) {
            errors.add(FieldError.body("#/card/cvc", "required: a string of 3 or 4 digits"));
        }
        return new Card(number, month, year, cvc);
    }

    // Counted and checked by code point: an emoji is one character, not two UTF-16 units. Format characters (a
    // right-to-left override, a zero width space, U+FEFF) render as nothing or reorder what follows, so a reference
    // shown to a person could read as another; the line and paragraph separators (U+2028, U+2029) break a line in a
    // log viewer or a statement as a control character does; private-use, unassigned and noncharacters have no
    // agreed meaning.
    static boolean printable(int codePoint) {
        if ((codePoint & 0xFFFE) == 0xFFFE || (codePoint >= 0xFDD0 && codePoint <= 0xFDEF)) {
            return false;
        }
        return switch (Character.getType(codePoint)) {
        case Character.CONTROL, Character.FORMAT, Character.LINE_SEPARATOR, Character.PARAGRAPH_SEPARATOR,
             Character.SURROGATE, Character.PRIVATE_USE, Character.UNASSIGNED -> false;
        default -> true;
        };
    }

    private static String text(JsonNode parent, String field) {
        JsonNode node = parent.get(field);
        return node != null && node.isTextual() ? node.textValue() : null;
    }

    private static int intField(JsonNode parent, String field, int min, int max) {
        JsonNode node = parent.get(field);
        if (node == null || !node.isIntegralNumber() || !node.canConvertToInt()) {
            return -1;
        }
        int value = node.intValue();
        return value >= min && value <= max ? value : -1;
    }

    // A currency of ISO 4217 that money is paid in: codes without minor units (XXX, XAU and the other funds and
    // metals) are not.
    private static boolean isIso4217(String code) {
        try {
            return Currency.getInstance(code).getDefaultFractionDigits() >= 0;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }


    /**
     * Adds a 400 field error for each member of {@code object} not in {@code allowed}, naming it by its JSON pointer
     * (RFC 6901) when its name is plain and holds no card number, else by the object's pointer
     * ({@link JsonBody#memberPointer}).
     *
     * @param object  a JSON object
     * @param pointer the object's own pointer, e.g. {@code #/amount}
     * @param allowed its members
     * @param errors  where the errors go, in body order
     */
    static void unknownMembers(JsonNode object, String pointer, List<String> allowed, List<FieldError> errors) {
        for (Iterator<String> names = object.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (!allowed.contains(name)) {
                errors.add(FieldError.body(JsonBody.memberPointer(pointer, name), "unknown member; allowed: "
                                                                                   + String.join(", ", allowed)));
            }
        }
    }
}
