package com.example.payments.authorization;

import java.time.Instant;
import java.util.Objects;

/**
 * A capture or a void of an authorization, as the resource store keeps it: reserved first ({@code PENDING}), settled
 * once by the acquirer's answer ({@code SUCCEEDED} or {@code DECLINED}). Its id derives from its attempt id, so every
 * execution of one request finds the same operation.
 *
 * @param id              the resource id (a UUID)
 * @param kind            {@code capture}, {@code void} or {@code expiry}
 * @param authorizationId the parent authorization
 * @param attemptId       the operation's own attempt id, sent to the acquirer
 * @param merchantId      the merchant that owns it
 * @param amount          captured or released minor units, in the authorization's currency
 * @param status          {@code PENDING}, {@code SUCCEEDED} or {@code DECLINED}
 * @param declineCode     the acquirer's code when declined, else {@code null}
 * @param createdAt       when it was reserved, millisecond precision
 */
public record OperationRecord(String id, String kind, String authorizationId, String attemptId, String merchantId,
                              Amount amount, String status, String declineCode, Instant createdAt) {

    /** {@code kind} of a capture. */
    public static final String CAPTURE = "capture";
    /** {@code kind} of a void. */
    public static final String VOID = "void";
    /** {@code kind} of the void the expiry worker sends: the authorization becomes {@code EXPIRED}. */
    public static final String EXPIRY = "expiry";

    /**
     * The lifecycle operation of this kind.
     *
     * @return capture, void or expire
     */
    public Lifecycle.Operation operation() {
        return switch (kind) {
        case CAPTURE -> Lifecycle.Operation.CAPTURE;
        case EXPIRY -> Lifecycle.Operation.EXPIRE;
        default -> Lifecycle.Operation.VOID;
        };
    }

    /**
     * Checks the required parts.
     *
     * @throws NullPointerException when one is null
     */
    public OperationRecord {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(authorizationId, "authorizationId");
        Objects.requireNonNull(attemptId, "attemptId");
        Objects.requireNonNull(merchantId, "merchantId");
        Objects.requireNonNull(amount, "amount");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(createdAt, "createdAt");
    }

    /**
     * Whether the acquirer's answer is still to come (or unknown).
     *
     * @return {@code true} while {@code PENDING}
     */
    public boolean pending() {
        return "PENDING".equals(status);
    }

    /**
     * This operation settled.
     *
     * @param succeeded   the acquirer applied it
     * @param declineCode its code when declined
     * @return the record
     */
    public OperationRecord settled(boolean succeeded, String declineCode) {
        return new OperationRecord(id, kind, authorizationId, attemptId, merchantId, amount,
                                   succeeded ? "SUCCEEDED" : "DECLINED", succeeded ? null : declineCode, createdAt);
    }

    /**
     * The JSON body of the operation: its 201, every replay and {@code GET}.
     *
     * @return the body
     */
    public Body body() {
        return new Body(id, authorizationId, amount, status, declineCode, createdAt.toString());
    }

    /**
     * The body of a capture or a void.
     *
     * @param id              the operation id
     * @param authorizationId the parent authorization
     * @param amount          captured or released amount
     * @param status          {@code SUCCEEDED}, {@code DECLINED} or {@code PENDING}
     * @param declineCode     the acquirer's code, only with {@code DECLINED}
     * @param createdAt       ISO-8601 UTC instant, millisecond precision
     */
    @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
    public record Body(String id, String authorizationId, Amount amount, String status, String declineCode,
                       String createdAt) {
    }
}
