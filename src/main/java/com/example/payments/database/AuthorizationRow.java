package com.example.payments.database;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.UUID;

import com.example.payments.authorization.Authorization;
import com.example.payments.http.Json;
import com.example.payments.idempotency.Decision;

/**
 * One new row of the {@code authorizations} table, the system of record: written in the transaction that records its
 * decision ({@link PostgresIdempotencyStore}), never with a card number or CVC.
 *
 * @param id          the authorization id (UUID version 8 derived from the attempt id)
 * @param merchant    merchant id
 * @param reference   merchant reference, or {@code null}
 * @param amount      minor units, > 0
 * @param currency    ISO 4217 code
 * @param brand       card brand, e.g. {@code visa}
 * @param lastFour    last four digits of the PAN
 * @param status      {@code APPROVED} or {@code DECLINED}
 * @param declineCode why it was declined, or {@code null}
 * @param createdAt   when it was decided
 * @param state       its state when created: {@code APPROVED}, {@code DECLINED} or {@code REVERSED}
 * @param expiresAt   until when it is capturable ({@code createdAt} + {@code authorization.validity})
 * @param updatedAt   its last change, {@code createdAt}
 */
public record AuthorizationRow(UUID id, String merchant, String reference, long amount, String currency, String brand,
                               String lastFour, String status, String declineCode, Instant createdAt, String state,
                               Instant expiresAt, Instant updatedAt) {

    /** The kind of the decisions whose body is an authorization as created. */
    static final String KIND = "authorization";

    /**
     * The row of a recorded authorization decision, read from its body (the authorization as created, the JSON of
     * {@link Authorization}). A declined one's body has no expiry: its row gets {@code createdAt} + validity, which
     * nothing reads (only approved rows expire).
     *
     * @param decision the decision
     * @param validity {@code authorization.validity}
     * @return the row, or empty for decisions of other kinds (captures, voids)
     * @throws IllegalStateException when an authorization's body cannot be read (a bug, never a client error)
     */
    public static Optional<AuthorizationRow> of(Decision decision, Duration validity) {
        if (!KIND.equals(decision.key().kind())) {
            return Optional.empty();
        }
        Authorization view;
        try {
            view = Json.mapper().readValue(decision.body(), Authorization.class);
        } catch (java.io.IOException e) {
            throw new IllegalStateException("Cannot read the recorded authorization " + decision.key().id(), e);
        }
        Instant created = Instant.parse(view.createdAt());
        return Optional.of(new AuthorizationRow(UUID.fromString(view.id()), view.merchantId(), view.reference(),
                view.amount().value(), view.amount().currency(), view.card().brand(), view.card().last4(),
                view.status(), view.declineCode(), created, view.state(),
                view.expiresAt() == null ? created.plus(validity) : Instant.parse(view.expiresAt()),
                Instant.parse(view.updatedAt())));
    }
}
