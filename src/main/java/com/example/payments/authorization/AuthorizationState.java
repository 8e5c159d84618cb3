package com.example.payments.authorization;

/**
 * Where an authorization's lifecycle stands. Only {@link #APPROVED} moves on; every other state is final.
 */
public enum AuthorizationState {
    /** Approved by the issuer; its uncaptured remainder is capturable until it expires. */
    APPROVED,
    /** Captured to the authorized amount. */
    CAPTURED,
    /** Its uncaptured remainder was released by a void. */
    VOIDED,
    /** Its uncaptured remainder was released when {@code authorization.validity} ran out. */
    EXPIRED,
    /** Reversed at the issuer after an unknown outcome nobody retried. */
    REVERSED,
    /** Declined by the issuer: nothing to capture, ever. */
    DECLINED
}
