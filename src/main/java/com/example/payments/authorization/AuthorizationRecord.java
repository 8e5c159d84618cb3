package com.example.payments.authorization;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Objects;

/**
 * An authorization as the resource store keeps it: what the issuer decided (fixed once created) and where its
 * lifecycle stands (state, captured amount, captures, last change). Holds no PAN and no CVC.
 *
 * @param id             the resource id (a UUID derived from the attempt id)
 * @param attemptId      the attempt id the issuer deduplicated the authorization on
 * @param merchantId     the merchant that owns it: nobody else reads it
 * @param reference      merchant reference, or {@code null}
 * @param amount         authorized amount in minor units, with its currency
 * @param card           brand and last four digits
 * @param status         the issuer's decision, {@code APPROVED} or {@code DECLINED}
 * @param declineCode    why it was declined, or {@code null}
 * @param createdAt      the issuer's time of the decision, millisecond precision
 * @param state          current state
 * @param capturedAmount minor units captured so far (succeeded captures)
 * @param reservedAmount minor units reserved by pending captures
 * @param voidPending    a void (a request's or the expiry's) is pending
 * @param captures       ids of its captures (pending ones included), oldest first
 * @param expiresAt      {@code createdAt} + {@code authorization.validity}
 * @param updatedAt      last change, {@code createdAt} until the first one
 */
public record AuthorizationRecord(String id, String attemptId, String merchantId, String reference, Amount amount,
                                  Authorization.CardSummary card, String status, String declineCode, Instant createdAt,
                                  AuthorizationState state, long capturedAmount, long reservedAmount,
                                  boolean voidPending, List<String> captures, Instant expiresAt, Instant updatedAt) {

    /**
     * Checks the invariants every store relies on.
     *
     * @throws NullPointerException     when a required part is null
     * @throws IllegalArgumentException when the captured amount is negative or above the amount
     */
    public AuthorizationRecord {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(attemptId, "attemptId");
        Objects.requireNonNull(merchantId, "merchantId");
        Objects.requireNonNull(amount, "amount");
        Objects.requireNonNull(card, "card");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(createdAt, "createdAt");
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(expiresAt, "expiresAt");
        Objects.requireNonNull(updatedAt, "updatedAt");
        captures = List.copyOf(captures);
        if (capturedAmount < 0 || reservedAmount < 0 || capturedAmount + reservedAmount > amount.value()) {
            throw new IllegalArgumentException("captured and reserved amounts out of [0, amount]");
        }
    }

    /**
     * A new authorization as the issuer decided it: {@code APPROVED} (capturable) or {@code DECLINED}, nothing
     * captured, changed last when created.
     *
     * @param id         the resource id
     * @param attemptId  the attempt id
     * @param request    the validated request
     * @param decision   the issuer's decision
     * @param validity   {@code authorization.validity}
     * @return the record
     */
    static AuthorizationRecord created(String id, String attemptId, AuthorizationRequest request,
                                       Authorizer.Decision decision, Duration validity) {
        // The issuer's time, not ours: a re-execution after a store lost the decision rebuilds the same record.
        Instant createdAt = decision.decidedAt().truncatedTo(ChronoUnit.MILLIS);
        Card card = request.card();
        return new AuthorizationRecord(id, attemptId, request.merchantId(), request.reference(), request.amount(),
                new Authorization.CardSummary(card.brand(), card.last4()),
                decision.approved() ? "APPROVED" : "DECLINED", decision.declineCode(), createdAt,
                decision.approved() ? AuthorizationState.APPROVED : AuthorizationState.DECLINED, 0, 0, false,
                List.of(), createdAt.plus(validity), createdAt);
    }

    /**
     * The authorization the reconciler records for an unknown outcome nobody retried, once the acquirer confirmed its
     * reversal: {@code DECLINED} with {@code declineCode: "reversed"}, state {@code REVERSED}, nothing capturable.
     *
     * @param outcome    the unknown outcome
     * @param reversedAt the acquirer's time of the reversal (millisecond precision): {@code createdAt}
     * @return the record
     */
    static AuthorizationRecord reversed(UnknownOutcome outcome, Instant reversedAt) {
        Instant at = reversedAt.truncatedTo(ChronoUnit.MILLIS);
        return new AuthorizationRecord(outcome.resourceId(), outcome.attemptId(), outcome.merchantId(),
                outcome.reference(), outcome.amount(), outcome.card(), "DECLINED", Reconciler.DECLINE_CODE, at,
                AuthorizationState.REVERSED, 0, 0, false, List.of(), at, at);
    }

    /**
     * The body as it was when the authorization was created: what its 201 and every replay send. Depends only on
     * what never changes, so every execution of the attempt builds the same bytes.
     *
     * @return the body
     */
    public Authorization createdView() {
        // A declined authorization's state never moves: DECLINED, or REVERSED when the reconciler created it so.
        AuthorizationState initial = "APPROVED".equals(status) ? AuthorizationState.APPROVED : state;
        return view(initial, 0, List.of(), createdAt);
    }

    /**
     * The body as it is now: what {@code GET} sends.
     *
     * @return the body
     */
    public Authorization currentView() {
        return view(state, capturedAmount, captures, updatedAt);
    }

    /**
     * Where the lifecycle stands, for {@link Lifecycle}.
     *
     * @return the position
     */
    public Lifecycle.Position position() {
        return new Lifecycle.Position(state, amount.value(), amount.currency(), capturedAmount, reservedAmount,
                                      voidPending, captures.size(), expiresAt);
    }

    /**
     * This authorization moved to a position, e.g. after a reservation or a settlement.
     *
     * @param to       the new position
     * @param captures its capture ids
     * @param now      the time of the change ({@code updatedAt} when the state or captured amount changed)
     * @return the record
     */
    public AuthorizationRecord moved(Lifecycle.Position to, List<String> captures, Instant now) {
        boolean changed = to.state() != state || to.captured() != capturedAmount;
        return new AuthorizationRecord(id, attemptId, merchantId, reference, amount, card, status, declineCode,
                createdAt, to.state(), to.captured(), to.reserved(), to.voidPending(), captures, expiresAt,
                changed ? now : updatedAt);
    }

    private Authorization view(AuthorizationState shownState, long captured, List<String> captureIds,
                               Instant changed) {
        boolean approved = "APPROVED".equals(status);
        return new Authorization(id, status, declineCode, merchantId, reference, amount, card, createdAt.toString(),
                                 shownState.name(), new Amount(captured, amount.currency()), captureIds,
                                 approved ? expiresAt.toString() : null, changed.toString());
    }
}
