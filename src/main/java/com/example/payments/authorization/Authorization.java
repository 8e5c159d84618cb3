package com.example.payments.authorization;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * A processed authorization: the body of {@code 201} and of {@code GET /v1/authorizations/{id}}, recorded once as
 * the decision of its attempt (the exact bytes every answer sends). Holds no PAN and no CVC: only the card's brand and last four digits.
 *
 * @param id          UUID version 8 holding 122 bits of a keyed hash of the attempt id: unguessable, and the same
 *                    for every execution of one attempt
 * @param status      {@code APPROVED} or {@code DECLINED}
 * @param declineCode why it was declined, omitted when approved
 * @param merchantId  merchant
 * @param reference   merchant reference, omitted when none was sent
 * @param amount      amount in minor units with currency
 * @param card        brand and last four digits
 * @param createdAt   ISO-8601 UTC instant with millisecond precision: the issuer's time of the decision
 *                    ({@link Authorizer.Decision#decidedAt()}), so every execution of the attempt builds the same bytes
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Authorization(String id, String status, String declineCode, String merchantId, String reference,
                            Amount amount, CardSummary card, String createdAt) {

    /**
     * The stored view of a card.
     *
     * @param brand {@code visa}, {@code mastercard}, ...
     * @param last4 last four digits of the PAN
     */
    public record CardSummary(String brand, String last4) {
    }
}
