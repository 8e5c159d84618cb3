package com.example.payments.authorization;

import java.util.List;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * The body of an authorization: of its {@code 201} (recorded once as the decision of its attempt, the exact bytes
 * every replay sends) and of {@code GET /v1/authorizations/{id}} (its current state, read from the resource store).
 * The two are the same bytes until the authorization changes. Holds no PAN and no CVC: only the card's brand and last
 * four digits.
 *
 * @param id             UUID version 8 holding 122 bits of a keyed hash of the attempt id: unguessable, and the same
 *                       for every execution of one attempt
 * @param status         the issuer's decision, {@code APPROVED} or {@code DECLINED}; never changes
 * @param declineCode    why it was declined, omitted when approved
 * @param merchantId     merchant
 * @param reference      merchant reference, omitted when none was sent
 * @param amount         amount in minor units with currency
 * @param card           brand and last four digits
 * @param createdAt      ISO-8601 UTC instant with millisecond precision: the issuer's time of the decision
 *                       ({@link Authorizer.Decision#decidedAt()}), so every execution of the attempt builds the same
 *                       bytes
 * @param state          where the lifecycle stands ({@link AuthorizationState}): {@code APPROVED} (capturable),
 *                       {@code CAPTURED}, {@code VOIDED}, {@code EXPIRED}, {@code REVERSED}, or {@code DECLINED}
 * @param capturedAmount sum of the succeeded captures, in the authorization's currency
 * @param captures       ids of its captures, oldest first
 * @param expiresAt      when an approved authorization stops being capturable ({@code createdAt} +
 *                       {@code authorization.validity}); omitted when declined
 * @param updatedAt      last change of the state, {@code createdAt} until the first one
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Authorization(String id, String status, String declineCode, String merchantId, String reference,
                            Amount amount, CardSummary card, String createdAt, String state, Amount capturedAmount,
                            List<String> captures, String expiresAt, String updatedAt) {

    /**
     * The stored view of a card.
     *
     * @param brand {@code visa}, {@code mastercard}, ...
     * @param last4 last four digits of the PAN
     */
    public record CardSummary(String brand, String last4) {
    }
}
