package com.example.payments.authentication;

import java.util.Objects;

import io.helidon.webserver.http.ServerRequest;

/**
 * The authenticated caller of a business request: the merchant it acts for. {@link AuthenticationFilter} attaches it
 * to the request once an {@link Authenticator} accepted the credentials; handlers read it with
 * {@link #of(ServerRequest)} and never look at credentials themselves, so swapping the authenticator (API keys, mTLS,
 * JWT, a trusted proxy's header) changes nothing behind the filter.
 *
 * @param merchantId the merchant the caller may act for, e.g. {@code m_123}; scopes idempotency keys, attempt ids,
 *                   quotas and reads; any non-blank text (an identity from elsewhere may contain {@code :})
 */
public record Caller(String merchantId) {

    /**
     * Creates a caller.
     *
     * @param merchantId the merchant, not blank
     * @throws IllegalArgumentException when blank
     */
    public Caller {
        Objects.requireNonNull(merchantId, "merchantId");
        if (merchantId.isBlank()) {
            throw new IllegalArgumentException("a caller's merchant id must not be blank");
        }
    }

    /**
     * The caller of a request that passed {@link AuthenticationFilter}.
     *
     * @param req the request
     * @return the caller
     * @throws IllegalStateException when the request was not authenticated: the route is public (like {@code /ping})
     *                               or the filter is missing, a wiring bug (500), never a client error
     */
    public static Caller of(ServerRequest req) {
        return req.context().get(Caller.class).orElseThrow(() -> new IllegalStateException(
                "No authenticated caller on " + req.prologue().method().text() + " " + req.path().path()
                + ": is AuthenticationFilter registered, and the path not public?"));
    }

    /**
     * Whether this caller may act for a merchant.
     *
     * @param merchant the merchant a request names, e.g. the body's {@code merchantId}
     * @return {@code true} when it is this caller's own
     */
    public boolean actsFor(String merchant) {
        return merchantId.equals(merchant);
    }

    void attachTo(ServerRequest req) {
        req.context().register(this);
    }
}
