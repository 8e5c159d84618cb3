package com.example.payments.authentication;

/**
 * What an {@link Authenticator} decided about one request's credentials: an identity, or a refusal (401).
 */
public sealed interface Authentication {

    /** No credentials at all (no {@code Authorization} header, no client certificate, ...). */
    String MISSING = "missing";
    /** Credentials present but not in the expected form (another scheme, two headers, bad characters). */
    String MALFORMED = "malformed";
    /** Well-formed credentials that match no caller (unknown or revoked API key, bad signature, expired token). */
    String UNKNOWN = "unknown";

    /**
     * The credentials identify a caller.
     *
     * @param caller who it is
     */
    record Authenticated(Caller caller) implements Authentication {
    }

    /**
     * The credentials are missing, malformed or unknown: 401 problem with {@code WWW-Authenticate}.
     *
     * @param reason    why, the {@code reason} tag of {@code auth_failures_total}: a short fixed token such as
     *                  {@link #MISSING}, {@link #MALFORMED}, {@link #UNKNOWN}; never derived from the credentials
     * @param challenge the {@code WWW-Authenticate} value (RFC 9110 section 11.6.1 requires one on every 401), e.g.
     *                  {@code Bearer realm="payments-authorization"}
     */
    record Refused(String reason, String challenge) implements Authentication {
    }
}
